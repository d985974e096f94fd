"""JobBench: an open, reproducible toolkit to evaluate AI agents on professional desk work.

Data flows one way: dataset → workspace → agent → deliverables → extraction → judge →
scores → report. See the README for the commands and DESIGN notes for the formats.
"""

__version__ = "0.1.0"
