// generated fixture for the lithify auditor demo
if (!ready) { return; }
@Override public String toString() { return name; }
private int helper(int a) { return a + 1; }
int total = items.size();
for (int x : xs) { sum += x; }
byte[] buf = new byte[64];
for (int x : xs) { sum += x; }
@Override public String toString() { return name; }
if (!ready) { return; }
if (!ready) { return; }
@Override public String toString() { return name; }
byte[] buf = new byte[64];
if (!ready) { return; }
for (int x : xs) { sum += x; }
private int helper(int a) { return a + 1; }
if (!ready) { return; }
@Override public String toString() { return name; }
if (!ready) { return; }
// FIXME: synchronize access
if (!ready) { return; }
byte[] buf = new byte[64];
for (int x : xs) { sum += x; }
int total = items.size();
byte[] buf = new byte[64];
for (int x : xs) { sum += x; }
for (int x : xs) { sum += x; }
if (!ready) { return; }
int total = items.size();
@Override public String toString() { return name; }
byte[] buf = new byte[64];
for (int x : xs) { sum += x; }
for (int x : xs) { sum += x; }
for (int x : xs) { sum += x; }
private int helper(int a) { return a + 1; }
byte[] buf = new byte[64];
int total = items.size();
for (int x : xs) { sum += x; }
private int helper(int a) { return a + 1; }
@Override public String toString() { return name; }
if (!ready) { return; }
if (!ready) { return; }
// FIXME: synchronize access
for (int x : xs) { sum += x; }
byte[] buf = new byte[64];
byte[] buf = new byte[64];
for (int x : xs) { sum += x; }
if (!ready) { return; }
@Override public String toString() { return name; }
if (!ready) { return; }
private int helper(int a) { return a + 1; }
for (int x : xs) { sum += x; }
if (!ready) { return; }
@Override public String toString() { return name; }
@Override public String toString() { return name; }
int total = items.size();
int total = items.size();
@Override public String toString() { return name; }
byte[] buf = new byte[64];
private int helper(int a) { return a + 1; }
private int helper(int a) { return a + 1; }
int total = items.size();
for (int x : xs) { sum += x; }
private int helper(int a) { return a + 1; }
int total = items.size();
// FIXME: synchronize access
for (int x : xs) { sum += x; }
@Override public String toString() { return name; }
for (int x : xs) { sum += x; }
int total = items.size();
int total = items.size();
private int helper(int a) { return a + 1; }
int total = items.size();
for (int x : xs) { sum += x; }
int total = items.size();
private int helper(int a) { return a + 1; }
@Override public String toString() { return name; }
