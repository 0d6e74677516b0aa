"""The Add a model tab: an AlpacaEval model_outputs.json checked, its answers encoded here with progress and a Stop,
then ranked like any other model in Customize and opened in Inspect, for the visitor's session only."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import gradio as gr
from crm_core.data import DataValidationError, read_model_outputs_json, responses_by_instruction

from usl_space.engine import Engine
from usl_space.progress import Progress
from usl_space.service import AppService
from usl_space.views import as_text

MAX_UPLOAD_BYTES = 20 * 1024 * 1024  # also the server's limit (launch max_file_size): bigger posts are never stored
MAX_UPLOADS = 3  # uploaded models per visitor; their responses are freed when the visitor leaves
UPLOAD_CHUNK = 32  # an upload's answers encoded per step (~0.25 s on 2 cores): Stop is heard between steps


def parse_upload(engine: Engine, path: str | None, name: str) -> tuple[str, dict[int, str]]:
    """An uploaded AlpacaEval model_outputs.json, checked: size, JSON, fields, instructions of this bench."""
    if not path:
        raise ValueError("choose a model_outputs.json file to upload")
    size = Path(path).stat().st_size
    if size > MAX_UPLOAD_BYTES:
        raise ValueError(f"the file is {size / 2**20:.1f} MB; at most {MAX_UPLOAD_BYTES // 2**20} MB")
    items = read_model_outputs_json(path)
    name = " ".join((name or "").split()) or str(next((i["generator"] for i in items if i.get("generator")), ""))
    if not name or len(name) > 80 or any(not ch.isprintable() for ch in name):
        raise ValueError("give the model a name of 1-80 printable characters")
    index = {text: idx for idx, text in engine.query.items()}
    rows = responses_by_instruction(name, items, index, Path(path).name)
    if not rows:
        raise ValueError("the file holds no responses")
    return f"upload:{name}", {row["idx"]: row["output"] for row in rows}


class AddModelTab:
    def __init__(self, svc: AppService):
        self.svc = svc

    def layout(self) -> None:
        with gr.Tab("Add a model"):
            gr.Markdown("Upload AlpacaEval `model_outputs.json` (a JSON array of `{instruction, output, "
                        f"generator}}`, at most {MAX_UPLOAD_BYTES // 2**20} MB). It is judged under the "
                        "Customize tab's criteria and ranked there, for your session only.")  # fmt: skip
            self.file = gr.File(label="model_outputs.json", file_types=[".json"], type="filepath",
                                elem_id="upload-file")  # fmt: skip
            self.name = gr.Textbox(label="Model name (default: the file's generator)")
            with gr.Row():
                self.go = gr.Button("Add", variant="primary", elem_id="upload-add")
                self.stop = gr.Button("Stop", elem_id="upload-stop")
            self.status = gr.Markdown(elem_id="upload-status")

    def wire(self, api: str, uploads: gr.State, models: gr.CheckboxGroup, inspect_model: gr.Dropdown) -> None:
        """An upload joins Customize's `models` (ticked) and Inspect's model list."""
        self.stop.click(self.stop_upload, None, None, api_name=f"{api}stop_upload", concurrency_limit=None)
        self.go.click(self.upload, [self.file, self.name, uploads, models],
                      [uploads, models, inspect_model, self.file, self.status], api_name=f"{api}upload")  # fmt: skip

    def upload(self, path, name, uploads, models, request: gr.Request):
        """Check the file, then encode its answers here, with progress (Stop ends it, nothing added): ranking with
        the upload is then as fast as with any other model."""
        started = time.perf_counter()
        unchanged = uploads, gr.skip(), gr.skip(), None  # the file box is emptied: the file is read once
        try:
            key, outputs = parse_upload(self.svc.engine, path, name)
            if key not in (uploads or {}) and len(uploads or {}) >= MAX_UPLOADS:
                raise ValueError(f"at most {MAX_UPLOADS} uploaded models per visitor; reload the page to start over")
        except (ValueError, DataValidationError) as error:
            shown = str(error).replace(str(path), Path(path).name) if path else str(error)  # no server paths
            yield *unchanged, "**Upload refused:**\n\n" + "  \n".join(as_text(line) for line in shown.splitlines())
            return
        finally:
            if path:
                Path(path).unlink(missing_ok=True)  # read once: the upload is not kept on disk
        stop = self.svc.stops[f"{request.session_hash}/upload"] = threading.Event()
        report = Progress(f"encoding the answers of {key}", len(outputs))
        prepared: list[bool] = []

        def encode() -> None:  # in a thread: this generator reports its progress meanwhile
            prepared.append(self.svc.engine.prepare_upload(key, outputs, report, stop.is_set, UPLOAD_CHUNK))

        worker = threading.Thread(target=encode, daemon=True, name="upload")
        worker.start()
        try:
            while worker.is_alive():
                yield *unchanged, as_text(report.line()) + ". **Stop** ends it; nothing is added then."
                worker.join(1.0)
        finally:
            self.svc.stops.pop(f"{request.session_hash}/upload", None)
        if not prepared:
            yield *unchanged, "**Upload failed** while encoding its answers; the server log says why."
            return
        if not prepared[0]:
            yield *unchanged, f"**Upload stopped** after {time.perf_counter() - started:.1f} s: nothing was added."
            return
        uploads = {**(uploads or {}), key: outputs}
        # the upload joins Models (ticked) and Inspect, for this visitor
        choices = self.svc.model_names + list(uploads)
        ticked = [*[m for m in models or [] if m != key], key]
        yield (uploads, gr.update(choices=choices, value=ticked), gr.update(choices=choices), None,
               f"Added **{as_text(key)}** ({len(outputs)} of {len(self.svc.engine.query)} queries answered; its "
               f"answers encoded in {time.perf_counter() - started:.1f} s, so boards with it are as quick as any). It "
               "is ticked in Customize's Models and can be opened in Inspect, for this session only.")  # fmt: skip

    def stop_upload(self, request: gr.Request) -> None:
        event = self.svc.stops.get(f"{request.session_hash}/upload")
        if event is not None:
            event.set()
