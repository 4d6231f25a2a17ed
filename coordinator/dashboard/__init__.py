"""``seawall dashboard``: the sessions of a repository (or of the unattended runner's
queue) on a local web page, live: the rows ``seawall watch`` shows, read by its reader
(``site``), served by the standard library's threading HTTP server (``server``) to a
page of this package's own files (``page.html``, ``dashboard.js``, ``dashboard.css``)
that polls them every second."""
