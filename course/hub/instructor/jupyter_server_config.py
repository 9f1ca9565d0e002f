"""The instructor's JupyterLab on the course hub: course/ configures it as for `make lab`
(the hub puts this folder before it on JUPYTER_CONFIG_PATH); only this differs.

JupyterHub forbids framing single-user pages (frame-ancestors 'none') unless the server
sets its own policy, and JupyterLab shows Formgrader in a frame of the same server: allow
frames from the same origin, which is Jupyter Server's own default.
"""
c = get_config()  # noqa: F821  (injected by Jupyter)

c.ServerApp.tornado_settings = {"headers": {"Content-Security-Policy": "frame-ancestors 'self'"}}
