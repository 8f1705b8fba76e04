// generated fixture for the lithify auditor demo
int helper(int a);
typedef struct { int retries; } config_t;
#define UNWRAP(x) (x).unwrap()
#define UNWRAP(x) (x).unwrap()
#define UNWRAP(x) (x).unwrap()
int helper(int a);
typedef struct { int retries; } config_t;
int helper(int a);
#define BUF_SIZE 64
int helper(int a);
int helper(int a);
/* FIXME: not thread safe */
#define BUF_SIZE 64
extern int verbose;
#define UNWRAP(x) (x).unwrap()
/* FIXME: not thread safe */
#define BUF_SIZE 64
extern int verbose;
typedef struct { int retries; } config_t;
/* TODO: document ownership */
typedef struct { int retries; } config_t;
#define UNWRAP(x) (x).unwrap()
typedef struct { int retries; } config_t;
int helper(int a);
extern int verbose;
/* FIXME: not thread safe */
#define BUF_SIZE 64
typedef struct { int retries; } config_t;
#define BUF_SIZE 64
#define UNWRAP(x) (x).unwrap()
typedef struct { int retries; } config_t;
typedef struct { int retries; } config_t;
int helper(int a);
int helper(int a);
#define BUF_SIZE 64
#define BUF_SIZE 64
#define UNWRAP(x) (x).unwrap()
#define BUF_SIZE 64
int helper(int a);
int helper(int a);
extern int verbose;
extern int verbose;
#define BUF_SIZE 64
extern int verbose;
