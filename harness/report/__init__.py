"""Reports: result files, a result as table models, Markdown and HTML renderings, and two
results side by side."""
