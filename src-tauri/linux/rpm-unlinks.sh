# The .rpm's %postun: the links %post made go with the last copy of the package ($1 is how many
# remain: 0 on removal, 1 after an upgrade, whose %post made them again).
if [ "$1" -eq 0 ]; then
  rm -f /usr/bin/perch
  for server in demo filesystem review web google; do
    rm -f "/usr/bin/perch-mcp-$server"
  done
fi
