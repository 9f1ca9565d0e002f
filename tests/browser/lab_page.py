"""What a person does in JupyterLab, as Playwright steps: menus, the file browser, running
a notebook, reading what it shows. Every wait has a deadline and fails with what it saw."""
from __future__ import annotations

import time
from pathlib import Path

from playwright.sync_api import Page

# Reads the open notebook's cells from the running app (exposed with
# --LabApp.expose_app_in_browser): what each code cell shows after a run.
NOTEBOOK_STATE_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  if (!panel || !panel.content || !panel.content.widgets) return null;
  const kernel = panel.sessionContext && panel.sessionContext.session
      && panel.sessionContext.session.kernel;
  return {
    path: panel.context.path,
    kernelStatus: kernel ? kernel.status : 'none',
    cells: panel.content.widgets.map((cell, index) => ({
      index,
      type: cell.model.type,
      executionCount: cell.model.type === 'code' ? cell.model.executionCount : null,
      tags: cell.model.getMetadata('tags') || [],
      source: cell.model.sharedModel.getSource(),
      nbgrader: cell.model.getMetadata('nbgrader') || {},
      outputs: cell.model.type === 'code' ? cell.model.outputs.toJSON() : [],
      prompt: cell.node.querySelector('.jp-InputPrompt')?.textContent || '',
    })),
  };
}"""


class Lab:
    def __init__(self, page: Page, shots: Path):
        self.page = page
        self.shots = shots
        shots.mkdir(parents=True, exist_ok=True)

    def screenshot(self, name: str, **options) -> Path:
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path), **options)
        return path

    def menu(self, *labels: str) -> None:
        """Click through the main menu, e.g. menu("Run", "Run All Cells")."""
        bar = self.page.locator(".lm-MenuBar-item", has_text=labels[0]).first
        bar.click()
        for label in labels[1:]:
            item = self.page.locator(".lm-Menu-content > .lm-Menu-item:visible").filter(
                has=self.page.locator(".lm-Menu-itemLabel", has_text=label)).first
            item.click()

    def file_browser_names(self) -> list[str]:
        items = self.page.locator(".jp-DirListing-item .jp-DirListing-itemText")
        items.first.wait_for()
        return [text.strip() for text in items.all_inner_texts()]

    def open_in_file_browser(self, *names: str) -> None:
        """Double-click down a path in the file browser, from its current folder."""
        for name in names:
            item = self.page.locator(".jp-DirListing-item", has_text=name).first
            item.dblclick()

    def notebook_state(self) -> dict | None:
        return self.page.evaluate(NOTEBOOK_STATE_JS)

    def wait_for_notebook(self, path: str, timeout: float = 60) -> dict:
        """Wait until `path` is the open notebook and its kernel is idle."""
        deadline = time.monotonic() + timeout
        state = None
        while time.monotonic() < deadline:
            state = self.notebook_state()
            if state and state["path"] == path and state["kernelStatus"] == "idle":
                return state
            time.sleep(0.3)
        raise AssertionError(f"notebook {path} did not open with an idle kernel within "
                             f"{timeout:.0f}s; last state: "
                             f"{state and {k: state[k] for k in ('path', 'kernelStatus')}}")

    def run_all_and_wait(self, timeout: float = 150) -> dict:
        """Run > Run All Cells, then wait until nothing is queued or running."""
        self.menu("Run", "Run All Cells")
        deadline = time.monotonic() + timeout
        quiet_since = None
        state = None
        while time.monotonic() < deadline:
            state = self.notebook_state()
            busy = state["kernelStatus"] != "idle" or any(
                "*" in cell["prompt"] for cell in state["cells"])
            started = any(cell["executionCount"] for cell in state["cells"])
            if busy or not started:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since > 1.0:
                return state
            time.sleep(0.3)
        pending = [cell["index"] for cell in state["cells"] if "*" in cell["prompt"]]
        raise AssertionError(f"Run All Cells did not finish within {timeout:.0f}s "
                             f"(kernel {state['kernelStatus']}, cells still running: {pending})")

    def show_output_picture(self, index: int) -> None:
        """Select a cell and bring its first output picture to the middle of the view."""
        self.page.evaluate("""async (index) => {
            const notebook = window.jupyterapp.shell.currentWidget.content;
            notebook.activeCellIndex = index;
            await notebook.scrollToItem(index, 'start');
            const picture = notebook.widgets[index].node.querySelector(
                '.jp-OutputArea-output img, .jp-RenderedSVG svg');
            if (picture) picture.scrollIntoView({block: 'center'});
        }""", index)
        self.page.wait_for_timeout(500)  # let the scroll settle before a screenshot

    def rendered_images(self) -> list[dict]:
        """Every picture in the notebook's outputs, and whether the browser decoded it."""
        return self.page.evaluate("""() => Array.from(document.querySelectorAll(
            '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output img, '
            + '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-RenderedSVG svg'))
          .map(el => ({tag: el.tagName, width: el.naturalWidth ?? el.getBBox().width,
                       complete: el.complete ?? true}))""")

    def dialog(self, timeout: float = 120_000):
        dialog = self.page.locator(".jp-Dialog-content")
        dialog.wait_for(timeout=timeout)
        return dialog

    def news_or_update_toasts(self) -> list[str]:
        toasts = self.page.locator(".Toastify__toast")
        return [text for text in toasts.all_inner_texts()
                if "news" in text.lower() or "update" in text.lower()]
