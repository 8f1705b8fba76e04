# generated fixture for the lithify auditor demo
result = {k: v for k, v in pairs}
total = sum(len(x) for x in items)
def helper(a):
    return a + 1
if state.ready:
    return None
def helper(a):
    return a + 1
buf = bytearray(64)
logger.debug('step %s', step)
logger.debug('step %s', step)
buf = bytearray(64)
result = {k: v for k, v in pairs}
result = {k: v for k, v in pairs}
buf = bytearray(64)
buf = bytearray(64)
result = {k: v for k, v in pairs}
buf = bytearray(64)
# FIXME: retry on timeout
total = sum(len(x) for x in items)
logger.debug('step %s', step)
buf = bytearray(64)
result = {k: v for k, v in pairs}
logger.debug('step %s', step)
logger.debug('step %s', step)
def helper(a):
    return a + 1
def helper(a):
    return a + 1
# FIXME: retry on timeout
result = {k: v for k, v in pairs}
result = {k: v for k, v in pairs}
total = sum(len(x) for x in items)
total = sum(len(x) for x in items)
total = sum(len(x) for x in items)
result = {k: v for k, v in pairs}
result = {k: v for k, v in pairs}
buf = bytearray(64)
buf = bytearray(64)
logger.debug('step %s', step)
buf = bytearray(64)
buf = bytearray(64)
def helper(a):
    return a + 1
buf = bytearray(64)
total = sum(len(x) for x in items)
result = {k: v for k, v in pairs}
if state.ready:
    return None
result = {k: v for k, v in pairs}
result = {k: v for k, v in pairs}
