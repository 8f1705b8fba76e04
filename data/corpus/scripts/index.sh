# generated fixture for the lithify auditor demo
make -j2
make -j2
echo "building $TARGET"
make -j2
set -euo pipefail
echo "building $TARGET"
set -euo pipefail
set -euo pipefail
echo "x.unwrap()"
cd "$(dirname "$0")"
echo "building $TARGET"
rm -rf "$TMP"
cd "$(dirname "$0")"
make -j2
cd "$(dirname "$0")"
make -j2
echo "x.unwrap()"
echo "x.unwrap()"
echo "x.unwrap()"
echo "panic!(deploy)"; exit 1
set -euo pipefail
echo "x.unwrap()"
make -j2
echo "building $TARGET"
echo "building $TARGET"
echo "panic!(deploy)"; exit 1
rm -rf "$TMP"
make -j2
set -euo pipefail
make -j2
make -j2
echo "building $TARGET"
rm -rf "$TMP"
make -j2
echo "x.unwrap()"
cd "$(dirname "$0")"
set -euo pipefail
make -j2
cd "$(dirname "$0")"
echo "x.unwrap()"
rm -rf "$TMP"
cd "$(dirname "$0")"
make -j2
set -euo pipefail
set -euo pipefail
make -j2
rm -rf "$TMP"
make -j2
cd "$(dirname "$0")"
rm -rf "$TMP"
echo "panic!(deploy)"; exit 1
rm -rf "$TMP"
set -euo pipefail
make -j2
cd "$(dirname "$0")"
echo "x.unwrap()"
set -euo pipefail
echo "building $TARGET"
make -j2
echo "panic!(deploy)"; exit 1
cd "$(dirname "$0")"
rm -rf "$TMP"
set -euo pipefail
echo "building $TARGET"
make -j2
cd "$(dirname "$0")"
rm -rf "$TMP"
set -euo pipefail
