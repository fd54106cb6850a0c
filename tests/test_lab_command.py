"""`workbench lab`'s JupyterLab command: no first-start question about Jupyter news.

Reference: JupyterLab 4's announcements plugin asks "Would you like to get notified about official Jupyter news?"
while the setting ``@jupyterlab/apputils-extension:notification`` ``fetchNews`` is "none" (whatever
``LabApp.news_url`` says); an ``overrides.json`` in the app settings folder changes that setting's default.
"""

import json
from pathlib import Path

from workbench.cli import lab_command


def test_lab_starts_with_news_and_update_checks_answered():
    command = lab_command()
    (settings,) = [a.split("=", 1)[1] for a in command if a.startswith("--LabApp.app_settings_dir=")]
    overrides = json.loads((Path(settings) / "overrides.json").read_text())
    notification = overrides["@jupyterlab/apputils-extension:notification"]
    assert notification == {"fetchNews": "false", "checkForUpdates": False}
    assert "--LabApp.default_url=/lab/tree/index.ipynb" in command
