"""A Sphinx extension that keeps each page's scripts unique.

sphinx-thebe registers its inline configuration script twice under Jupyter
Book 1, so every page declared `const THEBE_JS_URL` twice and the browser
logged "Identifier 'THEBE_JS_URL' has already been declared".  This drops the
second copy of any script whose file and inline body are both repeated.
"""


def _drop_repeated_scripts(app, pagename, templatename, context, doctree):
    seen, kept = set(), []
    for script in context.get("script_files", []):
        attributes = getattr(script, "attributes", {}) or {}
        # a file of "" and of None alike
        key = (getattr(script, "filename", None) or None, attributes.get("body"))
        if key not in seen:
            seen.add(key)
            kept.append(script)
    context["script_files"] = kept


def setup(app):
    app.connect("html-page-context", _drop_repeated_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
