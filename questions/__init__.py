"""Packets: the sample packet, the practice corpus and the packet format's JSON Schema. A
package only so that these files ship in the wheel and are found with ``importlib.resources``
wherever it is installed."""
