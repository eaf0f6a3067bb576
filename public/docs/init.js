// Starts Swagger UI on the page served at /docs, reading the document this
// Worker serves. validatorUrl: null keeps the page from calling an online
// validator, so it works with no internet access.
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  persistAuthorization: true,
});
