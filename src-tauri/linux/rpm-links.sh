# The .rpm's %post: the names the .deb carries as links (scripts/repack-deb.sh adds them there):
# `perch`, the command line, is the app binary started under that name, and each bundled MCP
# server is perch-mcp started under its own.
ln -sfn perch-desktop /usr/bin/perch
for server in demo filesystem review web google; do
  ln -sfn perch-mcp "/usr/bin/perch-mcp-$server"
done
