"use strict";(self.rspackChunklithify_workbench=self.rspackChunklithify_workbench||[]).push([[700],{646(o,r,t){var e=t(601),i=t.n(e),n=t(314),a=(t.n(n))()(i());a.push([o.id,`/* Follows JupyterLab's theme (light and dark) through its CSS variables. */
.lithify-sidebar {
  display: flex;
  flex-direction: column;
  background: var(--jp-layout-color1);
  color: var(--jp-ui-font-color1);
  font-size: var(--jp-ui-font-size1);
  overflow: auto;
  min-width: 260px;
}
.lithify-header { display: flex; align-items: center; justify-content: space-between; padding: 6px 8px; border-bottom: 1px solid var(--jp-border-color2); }
.lithify-title { font-weight: 600; text-transform: uppercase; letter-spacing: 0.04em; }
.lithify-button { background: var(--jp-layout-color2); color: var(--jp-ui-font-color1); border: 1px solid var(--jp-border-color1); border-radius: 3px; padding: 2px 8px; cursor: pointer; }
.lithify-fork { background: var(--jp-brand-color1); color: var(--jp-ui-inverse-font-color1); border: none; margin: 4px 0; }
.lithify-message { color: var(--jp-error-color1); padding: 0 8px; }
.lithify-journal-label { padding: 4px 8px; cursor: pointer; font-family: var(--jp-code-font-family); }
.lithify-journal-label:hover, .lithify-branch:hover { background: var(--jp-layout-color2); }
.lithify-branch { padding: 2px 8px; cursor: pointer; white-space: nowrap; font-family: var(--jp-code-font-family); font-size: var(--jp-code-font-size); }
.lithify-branch.jp-mod-selected, .lithify-event.jp-mod-selected { background: var(--jp-layout-color3); color: var(--jp-ui-font-color0); }
.lithify-subtitle { padding: 6px 8px 2px; font-weight: 600; }
.lithify-events { position: relative; height: 280px; overflow-y: auto; border-top: 1px solid var(--jp-border-color2); border-bottom: 1px solid var(--jp-border-color2); }
.lithify-events-spacer { position: relative; }
.lithify-event { position: absolute; left: 0; right: 0; height: 22px; line-height: 22px; padding: 0 6px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; cursor: pointer; font-family: var(--jp-code-font-family); font-size: var(--jp-code-font-size); }
.lithify-event span { margin-right: 8px; }
.lithify-seq { display: inline-block; min-width: 42px; text-align: right; color: var(--jp-ui-font-color2); }
.lithify-kind { display: inline-block; min-width: 52px; }
.lithify-kind-effect .lithify-kind { color: var(--jp-warn-color1); }
.lithify-kind-delta .lithify-kind { color: var(--jp-success-color1); }
.lithify-kind-compact .lithify-kind { color: var(--jp-error-color1); }
.lithify-kind-observe .lithify-kind { color: var(--jp-info-color1); }
.lithify-hash { color: var(--jp-ui-font-color2); }
.lithify-detail { padding: 0 8px 8px; }
.lithify-label { margin-top: 6px; color: var(--jp-ui-font-color2); }
.lithify-json { background: var(--jp-layout-color2); color: var(--jp-content-font-color1); padding: 6px; max-height: 260px; overflow: auto; white-space: pre-wrap; word-break: break-word; font-size: var(--jp-code-font-size); }
.lithify-results { padding: 12px; overflow: auto; background: var(--jp-layout-color1); color: var(--jp-ui-font-color1); }
.lithify-chart { display: block; max-width: 100%; background: white; margin: 8px 0; }
.lithify-table { border-collapse: collapse; font-size: var(--jp-code-font-size); }
.lithify-table th, .lithify-table td { border: 1px solid var(--jp-border-color2); padding: 2px 6px; }
.lithify-form { display: flex; flex-direction: column; min-width: 420px; }
.lithify-form-row { display: flex; align-items: center; gap: 8px; margin: 4px 0; }
.lithify-form-row > span { min-width: 70px; }
.lithify-form-row textarea, .lithify-form-row input, .lithify-form-row select { flex: 1; }
`,""]),t.d(r,{},{A:a})},314(o){o.exports=function(o){var r=[];return r.toString=function(){return this.map(function(r){var t="",e=void 0!==r[5];return r[4]&&(t+="@supports (".concat(r[4],") {")),r[2]&&(t+="@media ".concat(r[2]," {")),e&&(t+="@layer".concat(r[5].length>0?" ".concat(r[5]):""," {")),t+=o(r),e&&(t+="}"),r[2]&&(t+="}"),r[4]&&(t+="}"),t}).join("")},r.i=function(o,t,e,i,n){"string"==typeof o&&(o=[[null,o,void 0]]);var a={};if(e)for(var l=0;l<this.length;l++){var c=this[l][0];null!=c&&(a[c]=!0)}for(var p=0;p<o.length;p++){var s=[].concat(o[p]);e&&a[s[0]]||(void 0!==n&&(void 0===s[5]||(s[1]="@layer".concat(s[5].length>0?" ".concat(s[5]):""," {").concat(s[1],"}")),s[5]=n),t&&(s[2]&&(s[1]="@media ".concat(s[2]," {").concat(s[1],"}")),s[2]=t),i&&(s[4]?(s[1]="@supports (".concat(s[4],") {").concat(s[1],"}"),s[4]=i):s[4]="".concat(i)),r.push(s))}},r}},601(o){o.exports=function(o){return o[1]}},72(o){var r=[];function t(o){for(var t=-1,e=0;e<r.length;e++)if(r[e].identifier===o){t=e;break}return t}function e(o,e){for(var i={},n=[],a=0;a<o.length;a++){var l=o[a],c=e.base?l[0]+e.base:l[0],p=i[c]||0,s="".concat(c," ").concat(p);i[c]=p+1;var f=t(s),d={css:l[1],media:l[2],sourceMap:l[3],supports:l[4],layer:l[5]};if(-1!==f)r[f].references++,r[f].updater(d);else{var u=function(o,r){var t=r.domAPI(r);return t.update(o),function(r){r?(r.css!==o.css||r.media!==o.media||r.sourceMap!==o.sourceMap||r.supports!==o.supports||r.layer!==o.layer)&&t.update(o=r):t.remove()}}(d,e);e.byIndex=a,r.splice(a,0,{identifier:s,updater:u,references:1})}n.push(s)}return n}o.exports=function(o,i){var n=e(o=o||[],i=i||{});return function(o){o=o||[];for(var a=0;a<n.length;a++){var l=t(n[a]);r[l].references--}for(var c=e(o,i),p=0;p<n.length;p++){var s=t(n[p]);0===r[s].references&&(r[s].updater(),r.splice(s,1))}n=c}}},659(o){var r={};o.exports=function(o,t){var e=function(o){if(void 0===r[o]){var t=document.querySelector(o);if(window.HTMLIFrameElement&&t instanceof window.HTMLIFrameElement)try{t=t.contentDocument.head}catch(o){t=null}r[o]=t}return r[o]}(o);if(!e)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");e.appendChild(t)}},540(o){o.exports=function(o){var r=document.createElement("style");return o.setAttributes(r,o.attributes),o.insert(r,o.options),r}},56(o,r,t){o.exports=function(o){var r=t.nc;r&&o.setAttribute("nonce",r)}},825(o){o.exports=function(o){if("u"<typeof document)return{update:function(){},remove:function(){}};var r=o.insertStyleElement(o);return{update:function(t){var e,i,n;e="",t.supports&&(e+="@supports (".concat(t.supports,") {")),t.media&&(e+="@media ".concat(t.media," {")),(i=void 0!==t.layer)&&(e+="@layer".concat(t.layer.length>0?" ".concat(t.layer):""," {")),e+=t.css,i&&(e+="}"),t.media&&(e+="}"),t.supports&&(e+="}"),(n=t.sourceMap)&&"u">typeof btoa&&(e+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(n))))," */")),o.styleTagTransform(e,r,o.options)},remove:function(){var o;null===(o=r).parentNode||o.parentNode.removeChild(o)}}}},113(o){o.exports=function(o,r){if(r.styleSheet)r.styleSheet.cssText=o;else{for(;r.firstChild;)r.removeChild(r.firstChild);r.appendChild(document.createTextNode(o))}}},959(o,r,t){var e=t(72),i=t.n(e),n=t(825),a=t.n(n),l=t(659),c=t.n(l),p=t(56),s=t.n(p),f=t(540),d=t.n(f),u=t(113),h=t.n(u),v=t(646),y={};y.styleTagTransform=h(),y.setAttributes=s(),y.insert=c().bind(null,"head"),y.domAPI=a(),y.insertStyleElement=d(),i()(v.A,y),v.A&&v.A.locals&&v.A.locals}}]);