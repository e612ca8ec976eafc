"""`context-inspector capture`: a local recording proxy between an agent and its model API.

The proxy (`proxy.py`, on aiohttp) forwards every request to the upstream untouched and passes the answer back as it
arrives; for the protocols it knows (`protocols.py`: Anthropic Messages, OpenAI Responses and Chat Completions) it
keeps a copy, rebuilds a streamed answer from its server-sent events (`sse.py`, `messages_stream.py`,
`responses_stream.py`, `chat_stream.py`) and writes one JSONL record per exchange (`recorder.py`, format in
docs/capture-format.md) that the request/response loader reads. `redact.py` decides what of the headers and URL may
be written (an allow-list), `encoding.py` decompresses bodies for the record only. No Textual here.
"""
