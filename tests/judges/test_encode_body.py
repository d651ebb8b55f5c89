"""The OpenAI request body is spliced, not re-encoded: it must equal ``json.dumps`` byte for byte."""

from __future__ import annotations

import base64
import json
import os

from murgat.judges.openai_compat import B64Text, _data_url, encode_body


def test_spliced_body_equals_json_dumps() -> None:
    img = _data_url("image/jpeg", base64.b64encode(os.urandom(3000)).decode())
    aud = B64Text(base64.b64encode(os.urandom(2000)).decode())
    payload = {"model": "m", "temperature": 0.0, "messages": [
        {"role": "system", "content": "Judge \"carefully\" — “quotes”, a tab\there, a newline\nthere, \u2028, é"},
        {"role": "user", "content": [
            {"type": "text", "text": "Claim: \\ backslash \u0000 nul"},
            {"type": "image_url", "image_url": {"url": img}},
            {"type": "input_audio", "input_audio": {"data": aud, "format": "wav"}},
            {"type": "image_url", "image_url": {"url": img}},
        ]}]}
    assert isinstance(img, B64Text)
    assert encode_body(payload) == json.dumps(payload, ensure_ascii=False).encode()
    assert encode_body({"model": "m", "messages": []}) == json.dumps({"model": "m", "messages": []}).encode()


def test_an_odd_mime_type_is_encoded_normally() -> None:
    url = _data_url('image/x"y', "AAAA")
    assert not isinstance(url, B64Text)
    payload = {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]}
    assert encode_body(payload) == json.dumps(payload, ensure_ascii=False).encode()
