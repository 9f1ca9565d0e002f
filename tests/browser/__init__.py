"""Helpers for the browser tests: a throwaway course copy, a JupyterLab server, Chromium."""
