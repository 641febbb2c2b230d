"""The page at / in a real headless Chromium (Debian's), driven by Playwright, against the served app."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.conftest import ROOT

ARTIFACTS = ROOT / "test-artifacts"


def chromium_executable() -> str:
    """Debian's chromium; installed here if this machine lacks it and may install packages (as in CI)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(
            ["apt-get", "install", "-y", "--no-install-recommends", "chromium"],
            env=env,
            check=False,
            capture_output=True,
            timeout=900,
        )
        found = shutil.which("chromium")
    if not found:
        raise RuntimeError("the page test needs Chromium: `apt-get install chromium` (make test does it as root)")
    return found


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_executable(), headless=True)
        yield b
        b.close()


def test_search_shows_corrected_and_raw_scores_and_the_correction(client, browser):
    docs = [
        {"id": "park", "text": "the cat sleeps in the park"},
        {"id": "city", "text": "the plane flies over the city"},
        {"id": "river", "text": "the river sings quietly"},
    ]
    assert client.post("/documents", json={"documents": docs}).status_code == 201
    info = client.get("/info").json()
    page = browser.new_page()
    page.goto(str(client.base_url))
    expect(page.locator("#model")).to_contain_text(f"correction whitening {info['correction']['id']}")
    expect(page.locator("#model")).to_contain_text("3 documents in Flat · search in the same space")
    expect(page.locator("#isotropy")).to_contain_text("IsoScore")
    # The fit's uniformity, raw then corrected (no labelled pairs in this fit: no alignment row).
    geometry = info["correction"]["extra"]["geometry"]
    assert geometry["corrected"]["uniformity"] < geometry["raw"]["uniformity"] and geometry["raw"]["alignment"] is None
    raw = geometry["raw"]["uniformity"]
    expect(page.locator("#isotropy")).to_contain_text(
        f"uniformity{raw:.1f}" if abs(raw) > 1.5 else f"uniformity{raw:.3f}"
    )
    expect(page.locator("#isotropy")).not_to_contain_text("alignment")
    page.fill("#query", "a cat sleeping in a park")
    page.click("#search-button")
    rows = page.locator("#results tbody tr")
    expect(rows).to_have_count(3)
    first = rows.nth(0).locator("td")
    expect(first.nth(1)).to_have_text("the cat sleeps in the park")
    corrected, raw = float(first.nth(2).inner_text()), float(first.nth(3).inner_text())
    api = client.post(
        "/similarity", json={"source": "a cat sleeping in a park", "targets": [docs[0]["text"]], "compare_raw": True}
    ).json()
    assert corrected == pytest.approx(api["scores"][0], abs=1e-3) and raw == pytest.approx(
        api["raw_scores"][0], abs=1e-3
    )
    expect(page.locator("#status")).to_contain_text(
        f"3 results · ranked hybrid (calibrated, lexical weight 0.7) · correction {info['correction']['id']}, "
        "searched in the same space"
    )
    page.select_option("#mode", "lexical")  # BM25 alone: only the document that shares words with the query
    page.click("#search-button")
    expect(page.locator("#status")).to_contain_text("1 results · ranked lexical")
    expect(rows).to_have_count(1)
    expect(rows.nth(0).locator("td").nth(1)).to_have_text("the cat sleeps in the park")
    page.select_option("#mode", "")
    page.click("#search-button")
    expect(rows).to_have_count(3)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "page.png"), full_page=True)
    assert (ARTIFACTS / "page.png").stat().st_size > 10_000
    page.close()


def test_errors_are_shown_not_swallowed(client, browser):
    page = browser.new_page()
    page.goto(str(client.base_url))
    page.fill("#query", "x" * 300)  # over this app's 200-character limit
    page.click("#search-button")
    expect(page.locator("#status")).to_have_class("error")
    expect(page.locator("#status")).to_contain_text("at most 200")
    page.close()


def test_a_collection_is_picked_and_searched_on_the_page(client, browser):
    assert client.post("/collections", json={"name": "planes", "pooling": "cls"}).status_code == 201
    planes = [{"id": "p1", "text": "the plane flies over the city"}, {"id": "p2", "text": "a jet lands at night"}]
    assert client.post("/collections/planes/documents", json={"documents": planes}).status_code == 201
    client.post("/documents", json={"documents": [{"id": "d1", "text": "the cat sleeps in the park"}]})
    page = browser.new_page()
    page.goto(str(client.base_url))
    expect(page.locator("#collection option")).to_have_count(2)
    page.select_option("#collection", "planes")
    expect(page.locator("#model")).to_contain_text("collection planes: hashing (cls pooling)")
    expect(page.locator("#model")).to_contain_text("2 documents in Flat")
    page.fill("#query", "the plane flies over the city")
    page.click("#search-button")
    rows = page.locator("#results tbody tr")
    expect(rows).to_have_count(2)  # only the collection's own documents, not the default's cat
    expect(rows.nth(0).locator("td").nth(1)).to_have_text("the plane flies over the city")
    assert float(rows.nth(0).locator("td").nth(2).inner_text()) == pytest.approx(1.0, abs=1e-3)
    rows.nth(0).get_by_role("button", name="yes: p1 is relevant").click()
    expect(page.locator("#status")).to_contain_text('judged p1 relevant for "the plane flies over the city"')
    rows.nth(1).get_by_role("button", name="no: p2 is not relevant").click()
    expect(page.locator("#status")).to_contain_text("judged p2 not relevant")
    judged = client.get("/collections/planes/judgments").json()["judgments"]
    assert judged == [
        {"query": "the plane flies over the city", "id": "p1", "grade": 1},
        {"query": "the plane flies over the city", "id": "p2", "grade": 0},
    ]
    page.close()


def test_the_pictures_drawn_offline_are_shown_for_the_collection_or_the_served_pooling(
    client, hashing_settings, browser
):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def draw(name: str, width: float) -> None:  # a blank picture whose width (100 px per inch) tells which it is
        fig = plt.figure(figsize=(width, 2))
        fig.savefig(folder / name)
        plt.close(fig)

    def shown_width() -> int:
        expect(page.locator("#pictures")).to_be_visible()
        page.locator("#pictures").evaluate("details => details.open = true")
        page.wait_for_function("document.getElementById('spaces').naturalWidth > 0")
        return page.evaluate("document.getElementById('spaces').naturalWidth")

    assert client.post("/collections", json={"name": "planes"}).status_code == 201
    page = browser.new_page()
    page.goto(str(client.base_url))
    expect(page.locator("#model")).to_contain_text("documents in Flat")
    expect(page.locator("#pictures")).to_be_hidden()  # nothing drawn yet
    folder = hashing_settings.data_dir / "report"
    folder.mkdir(parents=True, exist_ok=True)
    draw("spaces-mean.png", 3)  # `report`: STS-B sentences, the served pooling
    assert client.get("/pictures/spaces-mean.png").headers["content-type"] == "image/png"
    assert client.get("/pictures/..%2Fredis.png").status_code == 404
    page.reload()
    assert shown_width() == 300
    draw("documents-default.png", 4)  # `spaces`: the collection's own documents come first
    draw("documents-planes.png", 5)
    page.reload()
    assert shown_width() == 400
    page.select_option("#collection", "planes")
    expect(page.locator("#model")).to_contain_text("collection planes")
    page.wait_for_function("document.getElementById('spaces').naturalWidth === 500")
    (folder / "documents-planes.png").unlink()
    page.select_option("#collection", "default")
    page.wait_for_function("document.getElementById('spaces').naturalWidth === 400")
    page.select_option("#collection", "planes")
    expect(page.locator("#pictures")).to_be_hidden()  # no picture of its own: not the default's
    page.close()


def test_a_late_answer_for_the_earlier_choice_never_replaces_the_collection_chosen_since(client, browser):
    """The CI run that found it: the default's /info answered after the chosen collection's, and was shown."""
    assert client.post("/collections", json={"name": "planes", "pooling": "cls"}).status_code == 201
    page = browser.new_page()
    held = []
    page.route("**/info", lambda route: held.append(route))  # the default's /info is held back, as a slow server would
    page.goto(str(client.base_url))
    expect(page.locator("#collection option")).to_have_count(2)
    page.select_option("#collection", "planes")
    expect(page.locator("#model")).to_contain_text("collection planes: hashing (cls pooling)")
    with page.expect_response("**/info"):
        held[0].continue_()  # now it answers
    page.evaluate("() => new Promise((done) => setTimeout(done, 200))")  # the page's code has run on the answer
    expect(page.locator("#model")).to_contain_text("collection planes: hashing (cls pooling)")
    page.close()
