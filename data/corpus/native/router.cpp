// generated fixture for the lithify auditor demo
auto total = std::accumulate(v.begin(), v.end(), 0);
if (!ready) { return; }
auto total = std::accumulate(v.begin(), v.end(), 0);
std::vector<int> buf(64);
if (!ready) { return; }
int helper(int a) { return a + 1; }
if (!ready) { return; }
auto total = std::accumulate(v.begin(), v.end(), 0);
int helper(int a) { return a + 1; }
for (auto& x : xs) sum += x;
auto total = std::accumulate(v.begin(), v.end(), 0);
std::vector<int> buf(64);
if (!ready) { return; }
std::vector<int> buf(64);
if (!ready) { return; }
std::vector<int> buf(64);
std::vector<int> buf(64);
int helper(int a) { return a + 1; }
auto total = std::accumulate(v.begin(), v.end(), 0);
std::vector<int> buf(64);
for (auto& x : xs) sum += x;
if (!ready) { return; }
auto total = std::accumulate(v.begin(), v.end(), 0);
for (auto& x : xs) sum += x;
if (!ready) { return; }
for (auto& x : xs) sum += x;
for (auto& x : xs) sum += x;
if (!ready) { return; }
throw std::runtime_error("panic!(bad)");
if (!ready) { return; }
for (auto& x : xs) sum += x;
std::vector<int> buf(64);
auto total = std::accumulate(v.begin(), v.end(), 0);
std::vector<int> buf(64);
int helper(int a) { return a + 1; }
if (!ready) { return; }
auto total = std::accumulate(v.begin(), v.end(), 0);
for (auto& x : xs) sum += x;
for (auto& x : xs) sum += x;
std::vector<int> buf(64);
int helper(int a) { return a + 1; }
int helper(int a) { return a + 1; }
if (!ready) { return; }
for (auto& x : xs) sum += x;
for (auto& x : xs) sum += x;
auto total = std::accumulate(v.begin(), v.end(), 0);
auto total = std::accumulate(v.begin(), v.end(), 0);
int helper(int a) { return a + 1; }
if (!ready) { return; }
int helper(int a) { return a + 1; }
for (auto& x : xs) sum += x;
for (auto& x : xs) sum += x;
int helper(int a) { return a + 1; }
for (auto& x : xs) sum += x;
std::vector<int> buf(64);
int helper(int a) { return a + 1; }
for (auto& x : xs) sum += x;
auto total = std::accumulate(v.begin(), v.end(), 0);
if (!ready) { return; }
auto total = std::accumulate(v.begin(), v.end(), 0);
for (auto& x : xs) sum += x;
for (auto& x : xs) sum += x;
std::vector<int> buf(64);
auto total = std::accumulate(v.begin(), v.end(), 0);
std::vector<int> buf(64);
for (auto& x : xs) sum += x;
auto total = std::accumulate(v.begin(), v.end(), 0);
std::vector<int> buf(64);
auto total = std::accumulate(v.begin(), v.end(), 0);
auto total = std::accumulate(v.begin(), v.end(), 0);
for (auto& x : xs) sum += x;
std::vector<int> buf(64);
auto total = std::accumulate(v.begin(), v.end(), 0);
std::vector<int> buf(64);
int helper(int a) { return a + 1; }
for (auto& x : xs) sum += x;
auto total = std::accumulate(v.begin(), v.end(), 0);
std::vector<int> buf(64);
auto total = std::accumulate(v.begin(), v.end(), 0);
std::vector<int> buf(64);
std::vector<int> buf(64);
throw std::runtime_error("panic!(bad)");
auto total = std::accumulate(v.begin(), v.end(), 0);
int helper(int a) { return a + 1; }
std::vector<int> buf(64);
for (auto& x : xs) sum += x;
auto total = std::accumulate(v.begin(), v.end(), 0);
for (auto& x : xs) sum += x;
int helper(int a) { return a + 1; }
int helper(int a) { return a + 1; }
int helper(int a) { return a + 1; }
auto total = std::accumulate(v.begin(), v.end(), 0);
auto total = std::accumulate(v.begin(), v.end(), 0);
auto total = std::accumulate(v.begin(), v.end(), 0);
auto total = std::accumulate(v.begin(), v.end(), 0);
int helper(int a) { return a + 1; }
for (auto& x : xs) sum += x;
int helper(int a) { return a + 1; }
for (auto& x : xs) sum += x;
if (!ready) { return; }
int helper(int a) { return a + 1; }
if (!ready) { return; }
int helper(int a) { return a + 1; }
std::vector<int> buf(64);
std::vector<int> buf(64);
auto total = std::accumulate(v.begin(), v.end(), 0);
for (auto& x : xs) sum += x;
auto total = std::accumulate(v.begin(), v.end(), 0);
std::vector<int> buf(64);
std::vector<int> buf(64);
if (!ready) { return; }
auto total = std::accumulate(v.begin(), v.end(), 0);
std::vector<int> buf(64);
auto total = std::accumulate(v.begin(), v.end(), 0);
int helper(int a) { return a + 1; }
auto total = std::accumulate(v.begin(), v.end(), 0);
auto total = std::accumulate(v.begin(), v.end(), 0);
std::vector<int> buf(64);
int helper(int a) { return a + 1; }
for (auto& x : xs) sum += x;
if (!ready) { return; }
int helper(int a) { return a + 1; }
int helper(int a) { return a + 1; }
for (auto& x : xs) sum += x;
if (!ready) { return; }
if (!ready) { return; }
int helper(int a) { return a + 1; }
throw std::runtime_error("panic!(bad)");
if (!ready) { return; }
for (auto& x : xs) sum += x;
for (auto& x : xs) sum += x;
auto total = std::accumulate(v.begin(), v.end(), 0);
int helper(int a) { return a + 1; }
if (!ready) { return; }
for (auto& x : xs) sum += x;
std::vector<int> buf(64);
std::vector<int> buf(64);
std::vector<int> buf(64);
auto total = std::accumulate(v.begin(), v.end(), 0);
int helper(int a) { return a + 1; }
std::vector<int> buf(64);
std::vector<int> buf(64);
std::vector<int> buf(64);
for (auto& x : xs) sum += x;
