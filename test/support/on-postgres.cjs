process.env.E2E_DATABASE = 'postgres';
