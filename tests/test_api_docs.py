"""`/docs` works offline: the page names no other host and its assets come from us."""

from __future__ import annotations

import re

import httpx


def test_docs_page_loads_swagger_ui_from_the_service_itself(client: httpx.Client) -> None:
    page = client.get("/docs", headers={"Authorization": ""})
    assert page.status_code == 200
    html = page.text
    assert "SwaggerUIBundle" in html
    assert not re.search(r"https?://", html), "the docs page must not load anything from a CDN"
    refs = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert any(r.endswith(".js") for r in refs) and any(r.endswith(".css") for r in refs)
    for ref in refs:
        asset = client.get(ref)
        assert asset.status_code == 200, ref
        assert len(asset.content) > 1000, ref
    bundle = client.get(next(r for r in refs if r.endswith(".js"))).text
    # Swagger UI 5 reads OpenAPI 3.1 (what FastAPI writes); 4.x shows an error instead
    assert "SwaggerUIBundle" in bundle and "3.1" in client.get("/openapi.json").json()["openapi"]
    assert client.get("/docs/oauth2-redirect").status_code == 200
