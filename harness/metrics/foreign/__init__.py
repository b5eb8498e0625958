"""The foreign metric: a foreign peer's own figures (through its pipe, self-timed, its
memory). `metric` measures; `overhead` prices the pipe against the library."""
