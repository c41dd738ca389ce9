"""journal-mem: git-native, single-writer memory for teams of coding agents."""

__version__ = "0.1.0"
