"""JupyterLab settings for `make lab`: the course root, no pop-ups."""
c = get_config()  # noqa: F821  (injected by Jupyter)
c.ServerApp.open_browser = False
# The news and update checks would try the network and open pop-ups.
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"
