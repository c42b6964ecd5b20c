"""What the machine offers: devices (CPU, GPUs, split logical devices) and readings of memory
and load."""
