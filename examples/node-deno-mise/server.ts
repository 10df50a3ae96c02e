// Example app for slipway's tests: a Deno server started through package.json, Deno from mise.toml.
const port = Number(Deno.env.get('PORT') ?? 8080);

const server = Deno.serve({ hostname: '0.0.0.0', port }, () =>
  Response.json({
    runtime: 'deno',
    version: Deno.version.deno,
    nodeEnv: Deno.env.get('NODE_ENV') ?? null,
    devDependency: false,
    greeting: Deno.env.get('GREETING') ?? null,
  }),
);

Deno.addSignalListener('SIGTERM', async () => {
  console.log('received SIGTERM, stopping');
  await server.shutdown();
  Deno.exit(0);
});
