"""heritage-eval: evaluate VLMs and OCR systems on cultural-heritage benchmarks.

Benchmarks: Ancient-Bench (ancient Chinese artifact transcription), HCSU (calligraphy
style understanding) and MUSE (artworks in situated education). See the README.
"""

__version__ = "0.1.0"
