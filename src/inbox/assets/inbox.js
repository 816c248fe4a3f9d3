// The inbox's one script besides htmx: every request htmx makes carries the page's CSRF token (the <meta> tag), as
// the forms do in their _csrf field. No inline script anywhere (the inbox's CSP allows only files of its own).
document.addEventListener('htmx:configRequest', function (event) {
  var meta = document.querySelector('meta[name="csrf-token"]');
  if (meta) event.detail.headers['X-CSRF-Token'] = meta.getAttribute('content');
});
