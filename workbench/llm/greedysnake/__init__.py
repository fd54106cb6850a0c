"""GreedySnake (arXiv 2512.17570): SSD-offloaded LLM training with vertical ("snake") scheduling.

Files: ``schedule.py`` (task orders: horizontal = ZeRO-Infinity, vertical = the authors' snake), ``store.py``
(the on-disk state: per-unit files read and written with ``os.pread``/``os.pwrite``, page cache dropped, bytes
counted by class, double-buffered slots and a commit record), ``engine.py`` (the offloaded trainer under a
device-memory budget, with the deferred optimizer fraction alpha), ``reference.py`` (plain in-memory training
with gradient accumulation and ``torch.optim.Adam``), ``volume.py`` (the closed-form byte model),
``model.py`` (the discrete-event MODEL at paper scale and the LP configuration search), ``study.py``,
``runner.py``.
"""
