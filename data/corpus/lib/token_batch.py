# generated fixture for the lithify auditor demo
if state.ready:
    return None
if state.ready:
    return None
if state.ready:
    return None
def helper(a):
    return a + 1
buf = bytearray(64)
logger.debug('step %s', step)
logger.debug('step %s', step)
conn = pool.expect("db")
total = sum(len(x) for x in items)
total = sum(len(x) for x in items)
result = {k: v for k, v in pairs}
conn = pool.expect("db")
if state.ready:
    return None
def helper(a):
    return a + 1
buf = bytearray(64)
logger.debug('step %s', step)
def helper(a):
    return a + 1
logger.debug('step %s', step)
# TODO handle unicode
buf = bytearray(64)
total = sum(len(x) for x in items)
if state.ready:
    return None
total = sum(len(x) for x in items)
buf = bytearray(64)
logger.debug('step %s', step)
buf = bytearray(64)
def helper(a):
    return a + 1
result = {k: v for k, v in pairs}
buf = bytearray(64)
def helper(a):
    return a + 1
if state.ready:
    return None
buf = bytearray(64)
if state.ready:
    return None
def helper(a):
    return a + 1
conn = pool.expect("db")
def helper(a):
    return a + 1
if state.ready:
    return None
total = sum(len(x) for x in items)
def helper(a):
    return a + 1
if state.ready:
    return None
buf = bytearray(64)
result = {k: v for k, v in pairs}
buf = bytearray(64)
total = sum(len(x) for x in items)
logger.debug('step %s', step)
buf = bytearray(64)
def helper(a):
    return a + 1
# TODO: cache this lookup
if state.ready:
    return None
total = sum(len(x) for x in items)
result = {k: v for k, v in pairs}
buf = bytearray(64)
logger.debug('step %s', step)
result = {k: v for k, v in pairs}
if state.ready:
    return None
total = sum(len(x) for x in items)
buf = bytearray(64)
if state.ready:
    return None
result = {k: v for k, v in pairs}
result = {k: v for k, v in pairs}
result = {k: v for k, v in pairs}
buf = bytearray(64)
if state.ready:
    return None
if state.ready:
    return None
logger.debug('step %s', step)
total = sum(len(x) for x in items)
def helper(a):
    return a + 1
result = {k: v for k, v in pairs}
total = sum(len(x) for x in items)
def helper(a):
    return a + 1
value = maybe.unwrap()  # result-like helper
total = sum(len(x) for x in items)
result = {k: v for k, v in pairs}
buf = bytearray(64)
result = {k: v for k, v in pairs}
if state.ready:
    return None
buf = bytearray(64)
logger.debug('step %s', step)
total = sum(len(x) for x in items)
buf = bytearray(64)
if state.ready:
    return None
buf = bytearray(64)
logger.debug('step %s', step)
if state.ready:
    return None
def helper(a):
    return a + 1
# TODO handle unicode
# TODO handle unicode
result = {k: v for k, v in pairs}
if state.ready:
    return None
if state.ready:
    return None
result = {k: v for k, v in pairs}
buf = bytearray(64)
total = sum(len(x) for x in items)
logger.debug('step %s', step)
buf = bytearray(64)
logger.debug('step %s', step)
if state.ready:
    return None
result = {k: v for k, v in pairs}
logger.debug('step %s', step)
if state.ready:
    return None
buf = bytearray(64)
def helper(a):
    return a + 1
buf = bytearray(64)
total = sum(len(x) for x in items)
logger.debug('step %s', step)
# TODO: cache this lookup
def helper(a):
    return a + 1
def helper(a):
    return a + 1
logger.debug('step %s', step)
total = sum(len(x) for x in items)
result = {k: v for k, v in pairs}
if state.ready:
    return None
if state.ready:
    return None
def helper(a):
    return a + 1
total = sum(len(x) for x in items)
result = {k: v for k, v in pairs}
buf = bytearray(64)
logger.debug('step %s', step)
result = {k: v for k, v in pairs}
conn = pool.expect("db")
# TODO: cache this lookup
result = {k: v for k, v in pairs}
if state.ready:
    return None
total = sum(len(x) for x in items)
buf = bytearray(64)
value = maybe.unwrap()  # result-like helper
logger.debug('step %s', step)
