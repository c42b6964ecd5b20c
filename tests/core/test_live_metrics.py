"""The arithmetic of live training progress, and the rule that ends a diverging run."""

from __future__ import annotations

import math

import pytest

from studio.core.training.live_metrics import DivergedError, check_loss, pace


def test_pace_counts_this_sessions_samples_and_the_time_left():
    # Resumed at epoch 2 of 4 (100 samples, batches of 32): 2 batches into the third epoch.
    figures = pace(2, 2, 4.0, epochs=4, initial_epoch=2, samples=100, batch_size=32)
    assert figures["progress"] == pytest.approx((200 + 64) / 400)
    assert figures["samples_per_sec"] == pytest.approx(64 / 4.0)
    assert figures["eta_sec"] == pytest.approx((200 - 64) / 16)


def test_the_last_short_batch_counts_only_the_samples_left():
    figures = pace(0, 4, 2.0, epochs=1, initial_epoch=0, samples=100, batch_size=32)
    assert figures["progress"] == 1.0
    assert figures["eta_sec"] == 0.0
    assert figures["samples_per_sec"] == pytest.approx(50.0)


def test_no_time_elapsed_gives_a_finite_rate():
    figures = pace(0, 1, 0.0, epochs=1, initial_epoch=0, samples=10, batch_size=5)
    assert math.isfinite(figures["samples_per_sec"]) and math.isfinite(figures["eta_sec"])


@pytest.mark.parametrize("loss", [math.nan, math.inf, -math.inf])
def test_a_loss_that_is_not_finite_ends_the_run_saying_what_to_try(loss):
    with pytest.raises(DivergedError, match=r"in epoch 3, batch 7: training diverged\. "
                                            r"Try a lower learning rate \(for example 0\.001 "
                                            r"instead of 0\.01\)"):
        check_loss(loss, 2, 7, 0.01)


def test_a_finite_loss_goes_on():
    check_loss(1e30, 0, 1, 0.01)
