// generated fixture for the lithify auditor demo
for (int i = 0; i < n; i++) total += xs[i];
int total = 0;
int total = 0;
if (!ready) return -1;
for (int i = 0; i < n; i++) total += xs[i];
int total = 0;
if (!ready) return -1;
v = opt.unwrap();
char buf[64];
free(ptr);
int total = 0;
char buf[64];
free(ptr);
free(ptr);
x = must(r).expect("io");
int total = 0;
for (int i = 0; i < n; i++) total += xs[i];
v = opt.unwrap();
for (int i = 0; i < n; i++) total += xs[i];
// TODO: use snprintf
for (int i = 0; i < n; i++) total += xs[i];
v = opt.unwrap();
static int helper(int a) { return a + 1; }
static int helper(int a) { return a + 1; }
char buf[64];
char buf[64];
int total = 0;
int total = 0;
if (!ready) return -1;
char buf[64];
static int helper(int a) { return a + 1; }
for (int i = 0; i < n; i++) total += xs[i];
v = opt.unwrap();
/* TODO: bounds check */
for (int i = 0; i < n; i++) total += xs[i];
int total = 0;
static int helper(int a) { return a + 1; }
free(ptr);
int total = 0;
char buf[64];
if (!ready) return -1;
static int helper(int a) { return a + 1; }
if (!ready) return -1;
for (int i = 0; i < n; i++) total += xs[i];
if (!ready) return -1;
free(ptr);
static int helper(int a) { return a + 1; }
free(ptr);
if (!ready) return -1;
free(ptr);
if (!ready) return -1;
for (int i = 0; i < n; i++) total += xs[i];
free(ptr);
static int helper(int a) { return a + 1; }
if (!ready) return -1;
static int helper(int a) { return a + 1; }
free(ptr);
free(ptr);
for (int i = 0; i < n; i++) total += xs[i];
if (!ready) return -1;
free(ptr);
static int helper(int a) { return a + 1; }
static int helper(int a) { return a + 1; }
static int helper(int a) { return a + 1; }
static int helper(int a) { return a + 1; }
static int helper(int a) { return a + 1; }
static int helper(int a) { return a + 1; }
static int helper(int a) { return a + 1; }
free(ptr);
int total = 0;
int total = 0;
static int helper(int a) { return a + 1; }
static int helper(int a) { return a + 1; }
for (int i = 0; i < n; i++) total += xs[i];
char buf[64];
int total = 0;
static int helper(int a) { return a + 1; }
static int helper(int a) { return a + 1; }
for (int i = 0; i < n; i++) total += xs[i];
int total = 0;
if (!ready) return -1;
char buf[64];
static int helper(int a) { return a + 1; }
int total = 0;
char buf[64];
char buf[64];
for (int i = 0; i < n; i++) total += xs[i];
free(ptr);
if (!ready) return -1;
if (!ready) return -1;
if (!ready) return -1;
int total = 0;
static int helper(int a) { return a + 1; }
char buf[64];
int total = 0;
for (int i = 0; i < n; i++) total += xs[i];
for (int i = 0; i < n; i++) total += xs[i];
if (!ready) return -1;
for (int i = 0; i < n; i++) total += xs[i];
if (!ready) return -1;
int total = 0;
x = must(r).expect("io");
int total = 0;
for (int i = 0; i < n; i++) total += xs[i];
if (!ready) return -1;
static int helper(int a) { return a + 1; }
free(ptr);
if (!ready) return -1;
for (int i = 0; i < n; i++) total += xs[i];
if (!ready) return -1;
if (!ready) return -1;
for (int i = 0; i < n; i++) total += xs[i];
static int helper(int a) { return a + 1; }
static int helper(int a) { return a + 1; }
static int helper(int a) { return a + 1; }
for (int i = 0; i < n; i++) total += xs[i];
if (!ready) return -1;
char buf[64];
for (int i = 0; i < n; i++) total += xs[i];
v = opt.unwrap();
static int helper(int a) { return a + 1; }
char buf[64];
for (int i = 0; i < n; i++) total += xs[i];
static int helper(int a) { return a + 1; }
char buf[64];
free(ptr);
free(ptr);
if (!ready) return -1;
static int helper(int a) { return a + 1; }
