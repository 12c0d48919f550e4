"""The redactor and injection markers as of d5cb5aa, kept verbatim so
`python -m benchmarks.redaction` can quote before -> after."""
