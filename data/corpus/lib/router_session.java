// generated fixture for the lithify auditor demo
int total = items.size();
if (!ready) { return; }
private int helper(int a) { return a + 1; }
Unsafe u = getUnsafe(); // unsafe access
private int helper(int a) { return a + 1; }
private int helper(int a) { return a + 1; }
if (!ready) { return; }
byte[] buf = new byte[64];
byte[] buf = new byte[64];
byte[] buf = new byte[64];
private int helper(int a) { return a + 1; }
if (!ready) { return; }
byte[] buf = new byte[64];
int total = items.size();
for (int x : xs) { sum += x; }
// TODO log
private int helper(int a) { return a + 1; }
// TODO log
Token t = p.expect("{");
private int helper(int a) { return a + 1; }
@Override public String toString() { return name; }
if (!ready) { return; }
@Override public String toString() { return name; }
if (!ready) { return; }
byte[] buf = new byte[64];
if (!ready) { return; }
private int helper(int a) { return a + 1; }
int total = items.size();
int total = items.size();
private int helper(int a) { return a + 1; }
int total = items.size();
if (!ready) { return; }
if (!ready) { return; }
byte[] buf = new byte[64];
if (!ready) { return; }
private int helper(int a) { return a + 1; }
byte[] buf = new byte[64];
for (int x : xs) { sum += x; }
private int helper(int a) { return a + 1; }
int total = items.size();
for (int x : xs) { sum += x; }
if (!ready) { return; }
int total = items.size();
byte[] buf = new byte[64];
private int helper(int a) { return a + 1; }
private int helper(int a) { return a + 1; }
byte[] buf = new byte[64];
@Override public String toString() { return name; }
private int helper(int a) { return a + 1; }
int total = items.size();
@Override public String toString() { return name; }
if (!ready) { return; }
for (int x : xs) { sum += x; }
@Override public String toString() { return name; }
byte[] buf = new byte[64];
Unsafe u = getUnsafe(); // unsafe access
if (!ready) { return; }
private int helper(int a) { return a + 1; }
@Override public String toString() { return name; }
for (int x : xs) { sum += x; }
for (int x : xs) { sum += x; }
@Override public String toString() { return name; }
for (int x : xs) { sum += x; }
private int helper(int a) { return a + 1; }
if (!ready) { return; }
int total = items.size();
byte[] buf = new byte[64];
private int helper(int a) { return a + 1; }
@Override public String toString() { return name; }
int total = items.size();
for (int x : xs) { sum += x; }
@Override public String toString() { return name; }
int total = items.size();
private int helper(int a) { return a + 1; }
byte[] buf = new byte[64];
private int helper(int a) { return a + 1; }
if (!ready) { return; }
int total = items.size();
int total = items.size();
// TODO log
@Override public String toString() { return name; }
Token t = p.expect("{");
String v = maybe.unwrap();
String v = maybe.unwrap();
for (int x : xs) { sum += x; }
if (!ready) { return; }
int total = items.size();
int total = items.size();
private int helper(int a) { return a + 1; }
private int helper(int a) { return a + 1; }
@Override public String toString() { return name; }
private int helper(int a) { return a + 1; }
if (!ready) { return; }
for (int x : xs) { sum += x; }
if (!ready) { return; }
@Override public String toString() { return name; }
if (!ready) { return; }
if (!ready) { return; }
@Override public String toString() { return name; }
int total = items.size();
@Override public String toString() { return name; }
Token t = p.expect("{");
int total = items.size();
private int helper(int a) { return a + 1; }
for (int x : xs) { sum += x; }
byte[] buf = new byte[64];
int total = items.size();
int total = items.size();
byte[] buf = new byte[64];
@Override public String toString() { return name; }
// TODO: pool connections
for (int x : xs) { sum += x; }
for (int x : xs) { sum += x; }
int total = items.size();
for (int x : xs) { sum += x; }
String v = maybe.unwrap();
if (!ready) { return; }
@Override public String toString() { return name; }
byte[] buf = new byte[64];
private int helper(int a) { return a + 1; }
int total = items.size();
for (int x : xs) { sum += x; }
for (int x : xs) { sum += x; }
int total = items.size();
private int helper(int a) { return a + 1; }
String v = maybe.unwrap();
byte[] buf = new byte[64];
byte[] buf = new byte[64];
@Override public String toString() { return name; }
String v = maybe.unwrap();
for (int x : xs) { sum += x; }
for (int x : xs) { sum += x; }
byte[] buf = new byte[64];
for (int x : xs) { sum += x; }
byte[] buf = new byte[64];
@Override public String toString() { return name; }
int total = items.size();
int total = items.size();
byte[] buf = new byte[64];
if (!ready) { return; }
private int helper(int a) { return a + 1; }
private int helper(int a) { return a + 1; }
String v = maybe.unwrap();
int total = items.size();
if (!ready) { return; }
if (!ready) { return; }
int total = items.size();
if (!ready) { return; }
@Override public String toString() { return name; }
byte[] buf = new byte[64];
private int helper(int a) { return a + 1; }
byte[] buf = new byte[64];
byte[] buf = new byte[64];
@Override public String toString() { return name; }
int total = items.size();
int total = items.size();
Token t = p.expect("{");
int total = items.size();
private int helper(int a) { return a + 1; }
byte[] buf = new byte[64];
@Override public String toString() { return name; }
String v = maybe.unwrap();
