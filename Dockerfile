# syntax=docker/dockerfile:1.7
#
# gitops-scaffolder: the HTTP service (`gitops-scaffolder serve`) and its dashboard.
#
#   docker build -t ghcr.io/kubeopera/gitops-scaffolder:0.1.0 .
#
# Dry runs and the dashboard's Flux graphs clone the target repository and
# build the cluster tree, so the service needs git and kubectl just like the
# runner: it shares the runner's runtime (Debian slim, uid 65532, no npm, a
# checksum-verified kubectl). Scaffold runs use the runner image (Dockerfile.runner).

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: compile, then drop the dev dependencies ------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
COPY package.json package-lock.json ./
# No install scripts: the only dependency with one is esbuild (dev: tsx, the bundle, Vite), whose
# platform binary comes as an optional dependency without it.
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts/bundle.mjs ./scripts/bundle.mjs
COPY ui ./ui
# npm run build also builds the dashboard (ui/dist) with Vite.
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts

# ---- kubectl: a pinned release binary, verified -----------------------------------------------
FROM ${NODE_IMAGE} AS kubectl
ARG TARGETARCH
ARG KUBECTL_VERSION=v1.32.4
# Overrides the per-architecture defaults below (needed when KUBECTL_VERSION changes).
ARG KUBECTL_SHA256=
ARG KUBECTL_SHA256_AMD64=10d739e9af8a59c9e7a730a2445916e04bc9cbb44bc79d22ce460cd329fa076c
ARG KUBECTL_SHA256_ARM64=c6f96d0468d6976224f5f0d81b65e1a63b47195022646be83e49d38389d572c2
RUN set -eu; \
    apt-get update; \
    apt-get install -y --no-install-recommends ca-certificates curl; \
    arch="${TARGETARCH:-amd64}"; \
    case "$arch" in \
      amd64) sum="${KUBECTL_SHA256:-$KUBECTL_SHA256_AMD64}" ;; \
      arm64) sum="${KUBECTL_SHA256:-$KUBECTL_SHA256_ARM64}" ;; \
      *) echo "no kubectl checksum for architecture $arch" >&2; exit 1 ;; \
    esac; \
    curl -fsSL --proto '=https' --tlsv1.2 -o /usr/local/bin/kubectl \
      "https://dl.k8s.io/release/${KUBECTL_VERSION}/bin/linux/${arch}/kubectl"; \
    echo "${sum}  /usr/local/bin/kubectl" | sha256sum -c -; \
    chmod 0755 /usr/local/bin/kubectl; \
    /usr/local/bin/kubectl version --client

# ---- runtime ---------------------------------------------------------------------------------
FROM ${NODE_IMAGE}
# git + ssh for the target repository, tini as PID 1 (reaps the git/ssh/kubectl
# children and forwards SIGTERM when the Job is cancelled). npm, npx, corepack
# and yarn are removed: nothing installs packages at run time. The user is the
# distroless "nonroot" uid/gid the executor's pod securityContext names.
RUN set -eu; \
    apt-get update; \
    apt-get install -y --no-install-recommends ca-certificates git openssh-client tini; \
    rm -rf /var/lib/apt/lists/*; \
    rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
           /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
           /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-*; \
    groupadd --gid 65532 nonroot; \
    useradd --uid 65532 --gid 65532 --no-create-home --home-dir /tmp --shell /usr/sbin/nologin nonroot
COPY --from=kubectl /usr/local/bin/kubectl /usr/local/bin/kubectl
WORKDIR /app
ENV NODE_ENV=production \
    HOME=/tmp
# Root-owned and read-only to the process: the code cannot be changed at run time.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/ui/dist ./ui/dist
COPY platform ./platform
COPY schemas ./schemas
# The code cache of the runners the local executor starts (src/process/code-cache.ts), trained here where
# git and kubectl are (the build stage has neither, so `npm run build` skipped it): Dockerfile.runner says how.
RUN node /app/dist/bundle/train-runner-code-cache.js
USER 65532:65532
EXPOSE 8080
# bin "gitops-scaffolder" of package.json; configuration comes from the environment (docs/api.md).
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/node", "/app/dist/src/main.js"]
CMD ["serve"]
