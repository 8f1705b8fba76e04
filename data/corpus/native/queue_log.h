// generated fixture for the lithify auditor demo
#define UNWRAP(x) (x).unwrap()
extern int verbose;
#define BUF_SIZE 64
extern int verbose;
#define UNWRAP(x) (x).unwrap()
int helper(int a);
#define BUF_SIZE 64
typedef struct { int retries; } config_t;
#define BUF_SIZE 64
#define BUF_SIZE 64
extern int verbose;
typedef struct { int retries; } config_t;
extern int verbose;
#define EXPECT(x) (x).expect("x")
#define UNWRAP(x) (x).unwrap()
int helper(int a);
#define BUF_SIZE 64
typedef struct { int retries; } config_t;
extern int verbose;
#define UNWRAP(x) (x).unwrap()
int helper(int a);
int helper(int a);
typedef struct { int retries; } config_t;
#define UNWRAP(x) (x).unwrap()
#define BUF_SIZE 64
typedef struct { int retries; } config_t;
#define EXPECT(x) (x).expect("x")
#define BUF_SIZE 64
#define BUF_SIZE 64
extern int verbose;
int helper(int a);
extern int verbose;
typedef struct { int retries; } config_t;
int helper(int a);
#define BUF_SIZE 64
#define UNWRAP(x) (x).unwrap()
#define UNWRAP(x) (x).unwrap()
#define BUF_SIZE 64
int helper(int a);
extern int verbose;
extern int verbose;
