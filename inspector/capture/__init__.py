"""`context-inspector capture`: a local recording proxy between an agent and its model API.

The proxy (`proxy.py`, on aiohttp) forwards every request to its API's upstream untouched and passes the answer back
as it arrives; for the protocols it knows (`protocols.py`: Anthropic Messages, OpenAI Responses and Chat
Completions) an `Exchange` (`exchange.py`) keeps a copy: a streamed answer is split into server-sent events
(`sse.py`) and rebuilt (`rebuild.py`, and one module per protocol: `messages_stream.py`, `responses_stream.py`,
`chat_stream.py`), bodies are decompressed for the record only (`encoding.py`), and what of headers and URLs may be
written is an allow-list (`redact.py`). `recorder.py` writes one JSONL record per exchange (docs/capture-format.md),
which the request/response loader reads. `launch.py` points a command at the proxy; `background.py` runs one in a
thread beside other work (the app, the tests). No Textual here.
"""
