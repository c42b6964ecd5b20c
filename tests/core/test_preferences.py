"""The preferences file: versioned, written atomically, and never fatal when broken or newer."""

from __future__ import annotations

import json

from studio.core.base.preferences import (
    MAX_RECENT,
    MAX_SIDE,
    MAX_SIDE_LIMIT,
    VERSION,
    Preferences,
)


def test_preferences_survive_a_save_and_a_load(tmp_path):
    path = tmp_path / "config" / "preferences.json"
    projects = [tmp_path / f"p{i}.studio.json" for i in range(3)]
    for project in projects:
        project.write_text("{}")
    preferences = Preferences.load(path)
    assert (preferences.welcome_seen, preferences.recent_projects, preferences.note) == (
        False, [], "")
    preferences.welcome_seen = True
    for project in projects:
        preferences.add_recent(project)
    preferences.save()

    assert json.loads(path.read_text())["version"] == VERSION
    again = Preferences.load(path)
    assert again.welcome_seen and again.note == ""
    assert again.existing_recent() == [projects[2], projects[1], projects[0]]


def test_recent_projects_are_newest_first_once_each_and_at_most_ten(tmp_path):
    preferences = Preferences(tmp_path / "preferences.json")
    for i in range(MAX_RECENT + 3):
        preferences.add_recent(tmp_path / f"p{i}.studio.json")
    preferences.add_recent(tmp_path / "p5.studio.json")
    names = [path.rsplit("/", 1)[-1] for path in preferences.recent_projects]
    assert len(names) == MAX_RECENT
    assert names[:3] == ["p5.studio.json", "p12.studio.json", "p11.studio.json"]
    assert names.count("p5.studio.json") == 1


def test_missing_projects_are_not_offered(tmp_path):
    kept = tmp_path / "kept.studio.json"
    kept.write_text("{}")
    preferences = Preferences(tmp_path / "preferences.json")
    preferences.add_recent(kept)
    preferences.add_recent(tmp_path / "deleted.studio.json")
    assert preferences.existing_recent() == [kept]


def test_a_broken_file_gives_the_defaults_with_a_note_and_is_rewritten(tmp_path):
    path = tmp_path / "preferences.json"
    path.write_text('{"version": 1, "recent_projects": [')
    preferences = Preferences.load(path)
    assert (preferences.welcome_seen, preferences.recent_projects) == (False, [])
    assert "could not be read" in preferences.note and str(path) in preferences.note
    preferences.welcome_seen = True
    preferences.save()
    assert Preferences.load(path).welcome_seen


def test_a_file_from_a_newer_version_is_used_for_nothing_and_left_alone(tmp_path):
    path = tmp_path / "preferences.json"
    text = json.dumps({"version": VERSION + 1, "welcome_seen": True, "themes": ["dark"]})
    path.write_text(text)
    preferences = Preferences.load(path)
    assert not preferences.welcome_seen
    assert "newer Layer Studio" in preferences.note
    preferences.add_recent(tmp_path / "p.studio.json")
    preferences.save()
    assert path.read_text() == text


def test_a_file_that_is_not_preferences_gives_the_defaults(tmp_path):
    path = tmp_path / "preferences.json"
    path.write_text('["not", "preferences"]')
    preferences = Preferences.load(path)
    assert preferences.recent_projects == [] and "not a Layer Studio" in preferences.note


def test_the_search_engine_and_address_are_remembered_and_a_strange_engine_is_not(tmp_path):
    path = tmp_path / "preferences.json"
    preferences = Preferences.load(path)
    assert (preferences.search_engine, preferences.ray_address) == ("workers", "")
    preferences.search_engine, preferences.ray_address = "cluster", "10.0.0.5:6379"
    preferences.save()
    again = Preferences.load(path)
    assert (again.search_engine, again.ray_address) == ("cluster", "10.0.0.5:6379")
    assert "token" not in path.read_text()  # a cluster's token is never written
    path.write_text(json.dumps({"version": VERSION, "search_engine": "quantum",
                                "ray_address": 6379}))
    odd = Preferences.load(path)
    assert (odd.search_engine, odd.ray_address, odd.note) == ("workers", "", "")


def test_how_the_editor_adds_images_is_remembered_and_strange_values_are_not(tmp_path):
    path = tmp_path / "preferences.json"
    preferences = Preferences.load(path)
    assert (preferences.max_side, preferences.keep_originals) == (MAX_SIDE, False)
    preferences.max_side, preferences.keep_originals = 0, True
    preferences.save()
    again = Preferences.load(path)
    assert (again.max_side, again.keep_originals) == (0, True)
    for side, keep in ((-5, "yes"), (MAX_SIDE_LIMIT + 1, 1), (512.0, None), (True, [])):
        path.write_text(json.dumps({"version": VERSION, "max_side": side,
                                    "keep_originals": keep}))
        odd = Preferences.load(path)
        assert (odd.max_side, odd.keep_originals, odd.note) == (MAX_SIDE, False, "")
