def render_markdown(report): return ""
