#!/usr/bin/env bash
# The "browser" of the conformance runs ($BROWSER for `perch mcp login`): fetches the sign-in
# page and follows its redirects, as a person's browser would after they approve; the suite's
# authorization server approves at once and redirects to Perch's loopback address.
exec node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$1"
