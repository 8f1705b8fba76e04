// generated fixture for the lithify auditor demo
for (int i = 0; i < n; i++) total += xs[i];
static int helper(int a) { return a + 1; }
for (int i = 0; i < n; i++) total += xs[i];
free(ptr);
int total = 0;
for (int i = 0; i < n; i++) total += xs[i];
static int helper(int a) { return a + 1; }
char buf[64];
int total = 0;
char buf[64];
for (int i = 0; i < n; i++) total += xs[i];
for (int i = 0; i < n; i++) total += xs[i];
static int helper(int a) { return a + 1; }
if (!ready) return -1;
for (int i = 0; i < n; i++) total += xs[i];
char buf[64];
int total = 0;
int total = 0;
char buf[64];
static int helper(int a) { return a + 1; }
int total = 0;
die("panic!(%d)", code);
for (int i = 0; i < n; i++) total += xs[i];
static int helper(int a) { return a + 1; }
free(ptr);
static int helper(int a) { return a + 1; }
char buf[64];
for (int i = 0; i < n; i++) total += xs[i];
free(ptr);
char buf[64];
int total = 0;
for (int i = 0; i < n; i++) total += xs[i];
for (int i = 0; i < n; i++) total += xs[i];
for (int i = 0; i < n; i++) total += xs[i];
char buf[64];
free(ptr);
int total = 0;
char buf[64];
char buf[64];
free(ptr);
free(ptr);
static int helper(int a) { return a + 1; }
int total = 0;
for (int i = 0; i < n; i++) total += xs[i];
for (int i = 0; i < n; i++) total += xs[i];
int total = 0;
free(ptr);
free(ptr);
static int helper(int a) { return a + 1; }
int total = 0;
char buf[64];
char buf[64];
static int helper(int a) { return a + 1; }
static int helper(int a) { return a + 1; }
if (!ready) return -1;
