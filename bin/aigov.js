#!/usr/bin/env node
// npm links a workspace's bins into node_modules/.bin (never the root package's own): this file is that link's target.
import '../dist/service/aigov.js'
