# heritage-eval — the two commands of the README, plus developer helpers.
#   make demo   set up .venv and run Ancient-Bench on the bundled demo data with the bundled OCR
#   make test   set up .venv and run the whole test suite
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

FONTS  := fonts-arphic-ukai fonts-arphic-uming fonts-cwtex-fs fonts-cwtex-heib fonts-cwtex-kai \
          fonts-cwtex-ming fonts-cwtex-yen fonts-noto-cjk fonts-wqy-microhei fonts-wqy-zenhei

.PHONY: setup demo test lint bench fonts browser clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "torch==2.13.0"
	$(BIN)/python -m pip install --quiet -e ".[all,dev]"
	$(BIN)/python -m pip install --quiet -e plugins/chronicles-ocr
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/heritage-eval run ancient-bench --data data/demo/ancient_bench --model rapidocr --out runs/demo-ancient-bench

test: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -p no:cacheprovider

lint: $(STAMP)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

# Openly licensed CJK fonts, needed only to regenerate the demo data (scripts/make_*_demo.py);
# without them the regeneration tests skip. Debian/Ubuntu, as root.
fonts:
	apt-get update -qq && apt-get install -y -qq --no-install-recommends $(FONTS)

# Debian's Chromium and ChromeDriver for the viewer's browser tests (they skip without
# them outside CI). As root.
browser:
	apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium chromium-driver

clean:
	rm -rf $(VENV) runs
