"""Opening a real card through VFIO: the refusals (no card here; the VFIO
path itself is proven by `make vfio-test`)."""

from __future__ import annotations

import pathlib

import pytest

import homa_nic


def test_an_absent_card_is_a_device_error_that_says_what_to_do():
    with pytest.raises(homa_nic.DeviceError) as e:
        homa_nic.Nic.open_vfio("0000:ff:1f.7")
    assert isinstance(e.value, OSError) and isinstance(e.value, homa_nic.HomaError)
    assert "VFIO" in str(e.value) or "0000:ff:1f.7" in str(e.value), str(e.value)


def test_a_malformed_address_is_a_value_error():
    with pytest.raises(ValueError, match="DDDD:BB:DD.F"):
        homa_nic.Nic.open_vfio("01:00")


def test_a_bad_config_is_refused_before_the_device_is_touched(tmp_path: pathlib.Path):
    conf = tmp_path / "homa.conf"
    conf.write_text("endpoint_bpages = 0\n")
    with pytest.raises(homa_nic.ConfigError):
        homa_nic.Nic.open_vfio("0000:ff:1f.7", config=conf)
