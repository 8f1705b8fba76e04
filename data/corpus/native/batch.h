// generated fixture for the lithify auditor demo
typedef struct { int retries; } config_t;
int helper(int a);
typedef struct { int retries; } config_t;
int helper(int a);
extern int verbose;
#define BUF_SIZE 64
#define BUF_SIZE 64
#define BUF_SIZE 64
extern int verbose;
int helper(int a);
extern int verbose;
/* TODO: document ownership */
typedef struct { int retries; } config_t;
typedef struct { int retries; } config_t;
int helper(int a);
int helper(int a);
int helper(int a);
#define BUF_SIZE 64
/* TODO: document ownership */
/* TODO: document ownership */
#define BUF_SIZE 64
/* TODO: document ownership */
#define BUF_SIZE 64
#define BUF_SIZE 64
#define BUF_SIZE 64
/* TODO: document ownership */
#define BUF_SIZE 64
int helper(int a);
#define BUF_SIZE 64
int helper(int a);
#define BUF_SIZE 64
#define BUF_SIZE 64
typedef struct { int retries; } config_t;
typedef struct { int retries; } config_t;
typedef struct { int retries; } config_t;
#define BUF_SIZE 64
typedef struct { int retries; } config_t;
int helper(int a);
#define BUF_SIZE 64
extern int verbose;
extern int verbose;
