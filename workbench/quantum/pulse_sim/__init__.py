"""The pulse simulator as a technique: check it against qutip and calibrate a device's native pulses."""
