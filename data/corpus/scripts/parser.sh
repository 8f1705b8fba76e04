# generated fixture for the lithify auditor demo
echo "building $TARGET"
cd "$(dirname "$0")"
rm -rf "$TMP"
rm -rf "$TMP"
cd "$(dirname "$0")"
set -euo pipefail
cd "$(dirname "$0")"
cd "$(dirname "$0")"
make -j2
make -j2
echo "building $TARGET"
echo "building $TARGET"
echo "building $TARGET"
rm -rf "$TMP"
rm -rf "$TMP"
cd "$(dirname "$0")"
echo "building $TARGET"
cd "$(dirname "$0")"
echo "building $TARGET"
make -j2
make -j2
echo "building $TARGET"
echo "building $TARGET"
cd "$(dirname "$0")"
rm -rf "$TMP"
rm -rf "$TMP"
# FIXME: quote this
echo "building $TARGET"
make -j2
cd "$(dirname "$0")"
make -j2
rm -rf "$TMP"
echo "building $TARGET"
rm -rf "$TMP"
rm -rf "$TMP"
echo "building $TARGET"
make -j2
rm -rf "$TMP"
make -j2
echo "building $TARGET"
set -euo pipefail
set -euo pipefail
echo "building $TARGET"
cd "$(dirname "$0")"
rm -rf "$TMP"
rm -rf "$TMP"
echo "panic!(deploy)"; exit 1
set -euo pipefail
cd "$(dirname "$0")"
cd "$(dirname "$0")"
set -euo pipefail
cd "$(dirname "$0")"
echo "building $TARGET"
# FIXME: quote this
echo "building $TARGET"
make -j2
set -euo pipefail
echo "building $TARGET"
make -j2
rm -rf "$TMP"
rm -rf "$TMP"
echo "building $TARGET"
make -j2
rm -rf "$TMP"
echo "panic!(deploy)"; exit 1
make -j2
make -j2
set -euo pipefail
set -euo pipefail
make -j2
rm -rf "$TMP"
make -j2
make -j2
make -j2
make -j2
cd "$(dirname "$0")"
set -euo pipefail
rm -rf "$TMP"
set -euo pipefail
cd "$(dirname "$0")"
make -j2
cd "$(dirname "$0")"
echo "building $TARGET"
rm -rf "$TMP"
cd "$(dirname "$0")"
echo "panic!(deploy)"; exit 1
rm -rf "$TMP"
echo "building $TARGET"
# FIXME: quote this
rm -rf "$TMP"
rm -rf "$TMP"
set -euo pipefail
rm -rf "$TMP"
make -j2
make -j2
rm -rf "$TMP"
echo "building $TARGET"
rm -rf "$TMP"
cd "$(dirname "$0")"
set -euo pipefail
echo "building $TARGET"
echo "building $TARGET"
echo "building $TARGET"
cd "$(dirname "$0")"
set -euo pipefail
make -j2
set -euo pipefail
make -j2
cd "$(dirname "$0")"
echo "building $TARGET"
rm -rf "$TMP"
echo "building $TARGET"
echo "building $TARGET"
cd "$(dirname "$0")"
echo "building $TARGET"
rm -rf "$TMP"
set -euo pipefail
cd "$(dirname "$0")"
echo "building $TARGET"
rm -rf "$TMP"
cd "$(dirname "$0")"
cd "$(dirname "$0")"
cd "$(dirname "$0")"
cd "$(dirname "$0")"
make -j2
echo "building $TARGET"
cd "$(dirname "$0")"
set -euo pipefail
cd "$(dirname "$0")"
make -j2
rm -rf "$TMP"
echo "building $TARGET"
rm -rf "$TMP"
echo "building $TARGET"
echo "building $TARGET"
echo "building $TARGET"
