"""OpenClaw's memory files: discovery, the watcher, the doctor, session transcripts."""
