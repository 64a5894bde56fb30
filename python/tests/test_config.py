"""homa.conf from Python: cards opened with a file, bad files refused."""

from __future__ import annotations

import pathlib

import pytest

import homa_nic


def test_a_card_opened_with_a_file_sizes_its_endpoints(tmp_path: pathlib.Path):
    conf = tmp_path / "homa.conf"
    conf.write_text("endpoint_bpages = 4\nendpoint_tx_ring_entries = 8\nendpoint_completion_ring_entries = 16\n")
    network = homa_nic.Network(cards=1, name="py-config")
    card = network.open(0, config=conf)
    assert card.config_origin == str(conf)
    endpoint = homa_nic.Endpoint(card, 50)
    live = card.config_show()
    assert live["endpoint_bpages"] == {"next": 4, "open": {50: 4}}
    assert live["endpoint_tx_ring_entries"] == {"next": 8, "open": {50: 8}}
    assert live["unsched_bytes"] == 40_000  # the grant block's register
    assert len(live["unsched_cutoffs"]) == 8
    endpoint.close()


def test_a_bad_file_raises_config_error_naming_key_line_and_range(tmp_path: pathlib.Path):
    conf = tmp_path / "bad.conf"
    conf.write_text("endpoint_bpages = 4\nendpoint_bpages_typo = 1\nmax_overcommit = 9\n")
    with pytest.raises(homa_nic.ConfigError) as e:
        homa_nic.check_config(conf)
    assert e.value.origin == str(conf)
    keys = [(key, line) for key, line, _, _ in e.value.problems]
    assert keys == [("endpoint_bpages_typo", 2), ("max_overcommit", 3)]
    assert e.value.problems[1][3] == "1..=8"
    assert "line 2: endpoint_bpages_typo: unknown key" in str(e.value)
    network = homa_nic.Network(cards=1, name="py-config-bad")
    with pytest.raises(homa_nic.ConfigError):
        network.open(0, config=conf)


def test_the_example_config_is_valid(tmp_path: pathlib.Path):
    conf = tmp_path / "homa.conf"
    conf.write_text(homa_nic.example_config())
    homa_nic.check_config(conf)
