# syntax=docker/dockerfile:1
# Production image: one image, two roles (`api`, `worker`) plus `migrate`, chosen by command.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The operator console is an npm workspace: `npm ci` needs its manifest.
COPY console/package.json ./console/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
# The simulated sandbox upstream: the API mounts it when SANDBOX_ENABLED=true.
COPY sandbox ./sandbox
# The operator console's single-page app, built into console/dist, which the API serves at /console.
COPY console ./console
# Compile, then bundle the workflow code once so workers start without running webpack. The
# second bundle adds the diagnostic workflow: point DURAPAY_WORKFLOW_BUNDLE at it to run
# `durapay doctor` against this deployment.
RUN npm run build \
 && npm run console:build \
 && rm -rf src sandbox \
 && node bin/durapay.js bundle --out dist/workflow-bundle.js \
 && node bin/durapay.js bundle --diagnostics --out dist/workflow-bundle-diagnostics.js \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    DURAPAY_WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/console/dist ./console/dist
USER node
EXPOSE 8080
ENTRYPOINT ["node", "bin/durapay.js"]
CMD ["api"]
