"use strict";(self.rspackChunklithify_workbench=self.rspackChunklithify_workbench||[]).push([[700],{"./node_modules/css-loader/dist/cjs.js!./style/index.css"(o,i,t){var r=t("./node_modules/css-loader/dist/runtime/noSourceMaps.js"),e=t.n(r),l=t("./node_modules/css-loader/dist/runtime/api.js"),a=(t.n(l))()(e());a.push([o.id,`/* Follows JupyterLab's theme (light and dark) through its CSS variables. */
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
.lithify-button:disabled { opacity: 0.45; cursor: not-allowed; }
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
.lithify-chart { display: block; max-width: 100%; margin: 8px 0; }
.lithify-table { border-collapse: collapse; font-size: var(--jp-code-font-size); }
.lithify-table th, .lithify-table td { border: 1px solid var(--jp-border-color2); padding: 2px 6px; }
.lithify-form { display: flex; flex-direction: column; min-width: 420px; }
.lithify-form-row { display: flex; align-items: center; gap: 8px; margin: 4px 0; }
.lithify-form-row > span { min-width: 70px; }
.lithify-form-row textarea, .lithify-form-row input, .lithify-form-row select { flex: 1; }
.lithify-opener { display: flex; gap: 4px; padding: 4px 8px; }
.lithify-path { flex: 1; min-width: 0; background: var(--jp-input-background, var(--jp-layout-color1)); color: var(--jp-ui-font-color1); border: 1px solid var(--jp-border-color1); border-radius: 3px; padding: 2px 4px; }
.lithify-section { border-top: 2px solid var(--jp-border-color2); margin-top: 4px; }
.lithify-section-head { display: flex; align-items: center; justify-content: space-between; }
.lithify-icon-button { background: none; border: none; color: var(--jp-ui-font-color2); cursor: pointer; font-size: 14px; padding: 0 8px; }
.lithify-tree { position: relative; height: 220px; overflow: auto; border-top: 1px solid var(--jp-border-color2); }
.lithify-tree-grip { height: 5px; cursor: ns-resize; background: var(--jp-border-color2); }
.lithify-tree-grip:hover { background: var(--jp-brand-color2); }
.lithify-tree-spacer { position: relative; }
.lithify-tree-row { position: absolute; left: 0; right: 0; height: 20px; display: flex; align-items: center; white-space: nowrap; cursor: pointer; font-family: var(--jp-code-font-family); font-size: var(--jp-code-font-size); }
.lithify-tree-row:hover { background: var(--jp-layout-color2); }
.lithify-tree-row.jp-mod-selected { background: var(--jp-layout-color3); color: var(--jp-ui-font-color0); }
.lithify-timeline { flex: none; }
.lithify-tree-label { padding-left: 4px; overflow: hidden; text-overflow: ellipsis; }
.lithify-sweep-group .lithify-tree-label { font-style: italic; color: var(--jp-ui-font-color2); }
.lithify-link { stroke: var(--jp-border-color1); stroke-width: 1; }
.lithify-forkpoint { fill: var(--jp-brand-color1); }
.lithify-span { stroke: var(--jp-ui-font-color2); stroke-width: 2; }
.lithify-head { fill: var(--jp-ui-font-color2); }
.lithify-span.lithify-status-finished { stroke: var(--jp-success-color1); }
.lithify-head.lithify-status-finished { fill: var(--jp-success-color1); }
.lithify-span.lithify-status-failed { stroke: var(--jp-error-color1); }
.lithify-head.lithify-status-failed { fill: var(--jp-error-color1); }
.lithify-span.lithify-status-running { stroke: var(--jp-info-color1); }
.lithify-head.lithify-status-running { fill: var(--jp-info-color1); }
.lithify-fork-info { padding: 2px 8px; }
.lithify-facts { display: grid; grid-template-columns: auto 1fr; gap: 1px 8px; margin: 4px 0; }
.lithify-facts dt { color: var(--jp-ui-font-color2); }
.lithify-facts dd { margin: 0; word-break: break-word; }
.lithify-actions { display: flex; flex-wrap: wrap; gap: 4px; margin: 4px 0; }
.lithify-status { margin: 4px 0; }
.lithify-progress { height: 6px; background: var(--jp-layout-color3); border-radius: 3px; overflow: hidden; max-width: 600px; }
.lithify-progress-bar { height: 100%; width: 0; background: var(--jp-success-color1); transition: width 0.3s; }
.lithify-progress-failed .lithify-progress-bar { background: var(--jp-error-color1); }
.lithify-failure { border-left: 3px solid var(--jp-error-color1); padding: 4px 8px; margin: 6px 0; background: var(--jp-layout-color2); }
.lithify-failure-title { font-weight: 600; color: var(--jp-error-color1); }
.lithify-traceback { font-size: var(--jp-code-font-size); white-space: pre-wrap; margin: 4px 0; max-height: 160px; overflow: auto; }
.lithify-open-notebook { color: var(--jp-content-link-color); cursor: pointer; }
.lithify-controls { display: flex; flex-wrap: wrap; gap: 10px; margin: 8px 0; align-items: center; }
.lithify-control { display: flex; gap: 4px; align-items: center; }
.lithify-control > span { color: var(--jp-ui-font-color2); }
.lithify-control select { background: var(--jp-layout-color1); color: var(--jp-ui-font-color1); border: 1px solid var(--jp-border-color1); }
.lithify-chart-message { color: var(--jp-warn-color1); margin: 4px 0; }
.lithify-exports { display: flex; gap: 6px; margin: 6px 0; }
.lithify-download { text-decoration: none; }
.lithify-columns { margin: 6px 0; }
.lithify-column-choice { margin-right: 10px; white-space: nowrap; }
.lithify-table th { cursor: pointer; user-select: none; background: var(--jp-layout-color2); }
.lithify-diff { padding: 12px; overflow: auto; background: var(--jp-layout-color1); color: var(--jp-ui-font-color1); }
.lithify-changes { font-family: var(--jp-code-font-family); font-size: var(--jp-code-font-size); }
.lithify-change-added { color: var(--jp-success-color1); }
.lithify-change-removed { color: var(--jp-error-color1); }
.lithify-change-modified { color: var(--jp-warn-color1); }
.lithify-sides { display: flex; gap: 12px; }
.lithify-side { flex: 1; min-width: 0; }
.lithify-side .lithify-json { max-height: 480px; }
.lithify-tree-toggle { padding: 0 4px; cursor: pointer; }
/* a row's timeline and label never take the pointer: a click's target is the row, which a redraw keeps */
.lithify-tree-row > .lithify-timeline, .lithify-tree-row > .lithify-tree-label { pointer-events: none; }
.lithify-sweep-group:hover .lithify-sweep-link { text-decoration: underline; }
.lithify-section-error { color: var(--jp-error-color1); padding: 0 8px; }
.lithify-section-error:empty { display: none; }
.lithify-form-pair { display: flex; gap: 16px; }
.lithify-form-pair > .lithify-form-row { flex: 1; }
.lithify-form-error { color: var(--jp-error-color1); padding: 2px 8px 6px; max-width: 520px; white-space: pre-wrap; }
.lithify-form-about { color: var(--jp-ui-font-color2); padding: 2px 8px 6px; max-width: 520px; }
.lithify-view-tabs { display: flex; flex-wrap: wrap; gap: 4px; margin: 8px 0 2px; }
.lithify-view-tab.lithify-view-active { background: var(--jp-brand-color1); color: var(--jp-ui-inverse-font-color1); border-color: var(--jp-brand-color1); }
.lithify-chart-box { position: relative; margin: 8px 0; }
.lithify-vega { min-height: 40px; }
.lithify-reset-zoom { position: absolute; top: 0; right: 0; }
.lithify-filter { display: flex; flex-direction: column; gap: 2px; flex: 1; min-width: 0; }
.lithify-filter-input { background: var(--jp-input-background, var(--jp-layout-color1)); color: var(--jp-ui-font-color1); border: 1px solid var(--jp-border-color1); border-radius: 3px; padding: 2px 4px; font-family: var(--jp-code-font-family); font-size: var(--jp-code-font-size); min-width: 0; }
.lithify-results .lithify-filter { max-width: 640px; margin-top: 8px; }
.lithify-filter-message { color: var(--jp-ui-font-color2); font-size: var(--jp-ui-font-size0); }
.lithify-filter-message:empty { display: none; }
.lithify-filter-error { color: var(--jp-error-color1); }
.lithify-tree-tools { display: flex; gap: 4px; align-items: flex-start; padding: 4px 8px; }
.lithify-tree-row.lithify-dim { opacity: 0.5; }
.lithify-table-note { color: var(--jp-ui-font-color2); margin: 2px 0; }
.lithify-table-note:empty { display: none; }
.lithify-table tr[data-branch] { cursor: pointer; }
.lithify-table tr.jp-mod-selected td { background: var(--jp-layout-color3); }
.lithify-control-log span { color: var(--jp-ui-font-color2); }
/* a chart being replaced: dimmed until the new one is drawn; another view's: a line saying so */
.lithify-chart-stale .lithify-vega { opacity: 0.45; transition: opacity 0.2s; }
.lithify-chart-loading { color: var(--jp-ui-font-color2); padding: 24px 8px; }
.lithify-control-partial { margin: 4px 0; color: var(--jp-ui-font-color2); }
/* a fork's state, and a value that is only its last report (partial values shown) */
.lithify-table td.lithify-partial { font-style: italic; color: var(--jp-ui-font-color2); }
.lithify-table td.lithify-partial::after { content: '*'; }
.lithify-state-pruned, .lithify-state-cancelled { color: var(--jp-warn-color1); }
.lithify-state-failed { color: var(--jp-error-color1); }
.lithify-state-running { color: var(--jp-brand-color1); }

/* The study list: each sweep and study of a journal at a glance (studyList.ts). */
.lithify-studies { padding: 2px 8px 4px; border-bottom: var(--jp-border-width) solid var(--jp-border-color2); }
.lithify-studies-head { cursor: pointer; color: var(--jp-ui-font-color1); font-weight: 600; padding: 2px 0; }
.lithify-study-rows { max-height: 12em; overflow-y: auto; }
.lithify-study { position: relative; cursor: pointer; padding: 3px 4px; border-radius: 3px; }
.lithify-study:hover { background: var(--jp-layout-color2); }
.lithify-study-title { font-weight: 500; padding-right: 6em; }
.lithify-study-state { position: absolute; right: 4px; top: 3px; font-size: var(--jp-ui-font-size0); color: var(--jp-ui-font-color2); }
.lithify-study-running .lithify-study-state { color: var(--jp-brand-color1); }
.lithify-study-failed .lithify-study-state { color: var(--jp-error-color1); }
.lithify-study-best, .lithify-study-counts { font-size: var(--jp-ui-font-size0); color: var(--jp-ui-font-color2); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.lithify-studies-error { color: var(--jp-error-color1); }
.lithify-studies-error:empty { display: none; }

/* a branch's notes and artifacts (annotations.ts) */
.lithify-notes, .lithify-artifacts { margin: 0; padding-left: 16px; }
.lithify-note { white-space: pre-wrap; }
.lithify-note-input { width: calc(100% - 80px); margin-top: 2px; }
.lithify-note-message { color: var(--jp-error-color1); }
.lithify-artifact-size { color: var(--jp-ui-font-color2); }
`,""]),t.d(i,{},{A:a})},"./node_modules/css-loader/dist/runtime/api.js"(o){o.exports=function(o){var i=[];return i.toString=function(){return this.map(function(i){var t="",r=void 0!==i[5];return i[4]&&(t+="@supports (".concat(i[4],") {")),i[2]&&(t+="@media ".concat(i[2]," {")),r&&(t+="@layer".concat(i[5].length>0?" ".concat(i[5]):""," {")),t+=o(i),r&&(t+="}"),i[2]&&(t+="}"),i[4]&&(t+="}"),t}).join("")},i.i=function(o,t,r,e,l){"string"==typeof o&&(o=[[null,o,void 0]]);var a={};if(r)for(var n=0;n<this.length;n++){var s=this[n][0];null!=s&&(a[s]=!0)}for(var p=0;p<o.length;p++){var d=[].concat(o[p]);r&&a[d[0]]||(void 0!==l&&(void 0===d[5]||(d[1]="@layer".concat(d[5].length>0?" ".concat(d[5]):""," {").concat(d[1],"}")),d[5]=l),t&&(d[2]&&(d[1]="@media ".concat(d[2]," {").concat(d[1],"}")),d[2]=t),e&&(d[4]?(d[1]="@supports (".concat(d[4],") {").concat(d[1],"}"),d[4]=e):d[4]="".concat(e)),i.push(d))}},i}},"./node_modules/css-loader/dist/runtime/noSourceMaps.js"(o){o.exports=function(o){return o[1]}},"./node_modules/style-loader/dist/runtime/injectStylesIntoStyleTag.js"(o){var i=[];function t(o){for(var t=-1,r=0;r<i.length;r++)if(i[r].identifier===o){t=r;break}return t}function r(o,r){for(var e={},l=[],a=0;a<o.length;a++){var n=o[a],s=r.base?n[0]+r.base:n[0],p=e[s]||0,d="".concat(s," ").concat(p);e[s]=p+1;var c=t(d),f={css:n[1],media:n[2],sourceMap:n[3],supports:n[4],layer:n[5]};if(-1!==c)i[c].references++,i[c].updater(f);else{var h=function(o,i){var t=i.domAPI(i);return t.update(o),function(i){i?(i.css!==o.css||i.media!==o.media||i.sourceMap!==o.sourceMap||i.supports!==o.supports||i.layer!==o.layer)&&t.update(o=i):t.remove()}}(f,r);r.byIndex=a,i.splice(a,0,{identifier:d,updater:h,references:1})}l.push(d)}return l}o.exports=function(o,e){var l=r(o=o||[],e=e||{});return function(o){o=o||[];for(var a=0;a<l.length;a++){var n=t(l[a]);i[n].references--}for(var s=r(o,e),p=0;p<l.length;p++){var d=t(l[p]);0===i[d].references&&(i[d].updater(),i.splice(d,1))}l=s}}},"./node_modules/style-loader/dist/runtime/insertBySelector.js"(o){var i={};o.exports=function(o,t){var r=function(o){if(void 0===i[o]){var t=document.querySelector(o);if(window.HTMLIFrameElement&&t instanceof window.HTMLIFrameElement)try{t=t.contentDocument.head}catch(o){t=null}i[o]=t}return i[o]}(o);if(!r)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");r.appendChild(t)}},"./node_modules/style-loader/dist/runtime/insertStyleElement.js"(o){o.exports=function(o){var i=document.createElement("style");return o.setAttributes(i,o.attributes),o.insert(i,o.options),i}},"./node_modules/style-loader/dist/runtime/setAttributesWithoutAttributes.js"(o,i,t){o.exports=function(o){var i=t.nc;i&&o.setAttribute("nonce",i)}},"./node_modules/style-loader/dist/runtime/styleDomAPI.js"(o){o.exports=function(o){if("u"<typeof document)return{update:function(){},remove:function(){}};var i=o.insertStyleElement(o);return{update:function(t){var r,e,l;r="",t.supports&&(r+="@supports (".concat(t.supports,") {")),t.media&&(r+="@media ".concat(t.media," {")),(e=void 0!==t.layer)&&(r+="@layer".concat(t.layer.length>0?" ".concat(t.layer):""," {")),r+=t.css,e&&(r+="}"),t.media&&(r+="}"),t.supports&&(r+="}"),(l=t.sourceMap)&&"u">typeof btoa&&(r+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(l))))," */")),o.styleTagTransform(r,i,o.options)},remove:function(){var o;null===(o=i).parentNode||o.parentNode.removeChild(o)}}}},"./node_modules/style-loader/dist/runtime/styleTagTransform.js"(o){o.exports=function(o,i){if(i.styleSheet)i.styleSheet.cssText=o;else{for(;i.firstChild;)i.removeChild(i.firstChild);i.appendChild(document.createTextNode(o))}}},"./style/index.js"(o,i,t){var r=t("./node_modules/style-loader/dist/runtime/injectStylesIntoStyleTag.js"),e=t.n(r),l=t("./node_modules/style-loader/dist/runtime/styleDomAPI.js"),a=t.n(l),n=t("./node_modules/style-loader/dist/runtime/insertBySelector.js"),s=t.n(n),p=t("./node_modules/style-loader/dist/runtime/setAttributesWithoutAttributes.js"),d=t.n(p),c=t("./node_modules/style-loader/dist/runtime/insertStyleElement.js"),f=t.n(c),h=t("./node_modules/style-loader/dist/runtime/styleTagTransform.js"),y=t.n(h),u=t("./node_modules/css-loader/dist/cjs.js!./style/index.css"),v={};v.styleTagTransform=y(),v.setAttributes=d(),v.insert=s().bind(null,"head"),v.domAPI=a(),v.insertStyleElement=f(),e()(u.A,v),u.A&&u.A.locals&&u.A.locals}}]);